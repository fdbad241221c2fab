"""Skel and ADSP_LIBRARY_PATH checks on fake board trees."""

from __future__ import annotations

from board.checks import ERROR, OK, WARNING


def test_skel_on_the_path(run_check, qcs8550, board, board_env):
    (skel,) = run_check("htp-skel", qcs8550, root=board, env=board_env)
    assert skel.message == "libQnnHtpV73Skel.so in /opt/hexvoice/qnn/dsp"
    (path,) = run_check("adsp-path", qcs8550, root=board, env=board_env)
    assert path.level == OK and "($ADSP_LIBRARY_PATH)" in path.message


def test_unset_adsp_path_checks_the_service_default(run_check, qcs8550, board):
    (path,) = run_check("adsp-path", qcs8550, root=board, env={})
    assert path.level == OK and "profile default" in path.message
    (skel,) = run_check("htp-skel", qcs8550, root=board, env={})
    assert skel.level == OK


def test_skel_dir_not_on_adsp_path(run_check, qcs8550, board):
    env = {"ADSP_LIBRARY_PATH": "/usr/lib/rfsa/adsp;/dsp"}
    (f,) = run_check("htp-skel", qcs8550, root=board, env=env)
    assert f.level == ERROR
    assert "is in /opt/hexvoice/qnn/dsp, which is not on ADSP_LIBRARY_PATH" in f.message
    assert f.fix.startswith("export ADSP_LIBRARY_PATH='/opt/hexvoice/qnn/dsp;")


def test_missing_skel(run_check, qcs8550, board, board_env):
    (board / "opt/hexvoice/qnn/dsp/libQnnHtpV73Skel.so").unlink()
    (f,) = run_check("htp-skel", qcs8550, root=board, env=board_env)
    assert f.level == ERROR and "libQnnHtpV73Skel.so not found" in f.message
    assert "lib/hexagon-v73/unsigned" in f.fix


def test_colon_separated_adsp_path(run_check, qcs8550, board):
    env = {"ADSP_LIBRARY_PATH": "/opt/hexvoice/qnn/dsp:/usr/lib/rfsa/adsp"}
    (f,) = run_check("adsp-path", qcs8550, root=board, env=env)
    assert f.level == ERROR and "uses ':'; FastRPC splits on ';'" in f.message
    (skel,) = run_check("htp-skel", qcs8550, root=board, env=env)
    assert skel.level == ERROR  # the one "directory" does not exist


def test_adsp_path_without_the_system_dirs_warns(run_check, qcs8550, board):
    env = {"ADSP_LIBRARY_PATH": "/opt/hexvoice/qnn/dsp"}
    (f,) = run_check("adsp-path", qcs8550, root=board, env=env)
    assert f.level == WARNING
    assert "leaves out the system DSP dir(s) /usr/lib/rfsa/adsp; FastRPC" in f.message


def test_dsp_library_path_is_reported_when_set(run_check, qcs8550, board, board_env):
    env = {**board_env, "DSP_LIBRARY_PATH": "/usr/lib/dsp/cdsp"}
    path, dsp = run_check("adsp-path", qcs8550, root=board, env=env)
    assert path.level == OK and "($ADSP_LIBRARY_PATH)" in path.message
    assert dsp.level == OK
    assert (
        dsp.message
        == "DSP_LIBRARY_PATH=/usr/lib/dsp/cdsp (FastRPC searches it as well)"
    )
    assert len(run_check("adsp-path", qcs8550, root=board, env=board_env)) == 1


def test_a_skel_on_dsp_library_path_is_found(run_check, qcs8550, board):
    env = {
        "ADSP_LIBRARY_PATH": "/usr/lib/rfsa/adsp",
        "DSP_LIBRARY_PATH": "/opt/hexvoice/qnn/dsp",
    }
    (skel,) = run_check("htp-skel", qcs8550, root=board, env=env)
    assert skel.level == OK and skel.message.endswith("in /opt/hexvoice/qnn/dsp")
