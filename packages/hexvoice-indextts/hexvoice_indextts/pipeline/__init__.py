"""The IndexTTS-2 build, declared on hexvoice's build framework
(scripts/common/build): MODEL_DIR and the shared hub models -> graphs ->
verified bundle, under the bilibili Model Use License (build.py)."""
