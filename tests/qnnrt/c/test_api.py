"""The ctypes mirror against the sizes/offsets of docs/qnn.md (x86_64 LP64)."""

from __future__ import annotations

import ctypes as C

import pytest

from qnnrt.c import _api as A

SIZES = [
    (A.Qnn_Version_t, 12),
    (A.Qnn_ApiVersion_t, 24),
    (A.Qnn_ClientBuffer_t, 16),
    (A.Qnn_QuantizeParams_t, 40),
    (A.Qnn_TensorV1_t, 112),
    (A.Qnn_TensorV2_t, 136),
    (A.Qnn_Tensor_t, 144),
    (A.QnnSystemContext_GraphInfoV1_t, 40),
    (A.QnnSystemContext_GraphInfoV2_t, 56),
    (A.QnnSystemContext_GraphInfoV3_t, 80),
    (A.QnnSystemContext_GraphInfo_t, 88),
    (A.QnnSystemContext_BinaryInfoV1_t, 128),
    (A.QnnSystemContext_BinaryInfoV2_t, 136),
    (A.QnnSystemContext_BinaryInfoV3_t, 136),
    (A.QnnSystemContext_BinaryInfo_t, 144),
    (A.QnnHtpSystemContext_GraphBlobInfo_t, 40),
    (A.QnnHtpSystemContext_GraphBlobInfoV2_t, 72),
    (A.QnnBackend_Config_t, 16),
    (A.QnnDevice_Config_t, 16),
    (A.QnnContext_Config_t, 16),
    (A.QnnGraph_Config_t, 16),
    (A.QnnContext_Property_t, 16),
    (A.QnnHtpContext_CustomConfig_t, 24),
    (A.QnnHtpContext_CustomProperty_t, 16),
    (A.QnnHtpDevice_CustomConfig_t, 16),
    (A.QnnHtpPerfInfrastructure_DcvsV3_t, 64),
    (A.QnnHtpPerfInfrastructure_HmxV2_t, 20),
    (A.QnnHtpPerfInfrastructure_PowerConfig_t, 68),
    (A.QnnHtpDevice_Infrastructure_t, 40),
    (A.QnnDevice_PlatformInfo_t, 24),
    (A.QnnDevice_HardwareDeviceInfo_t, 40),
    (A.QnnDevice_CoreInfo_t, 24),
    (A.QnnHtpDevice_DeviceInfoExtension_t, 32),
    (A.QnnProfile_EventData_t, 24),
    (A.Qnn_MemDescriptor_t, 48),
    (A.QnnInterface_t, 608),
]

# (struct, field, offset) — absolute offsets quoted in the fact sheet.
OFFSETS = [
    (A.Qnn_TensorV1_t, "id", 0),
    (A.Qnn_TensorV1_t, "name", 8),
    (A.Qnn_TensorV1_t, "dataType", 24),
    (A.Qnn_TensorV1_t, "quantizeParams", 32),
    (A.Qnn_TensorV1_t, "rank", 72),
    (A.Qnn_TensorV1_t, "dimensions", 80),
    (A.Qnn_TensorV1_t, "memType", 88),
    (A.Qnn_TensorV1_t, "m", 96),
    (A.Qnn_TensorV2_t, "isDynamicDimensions", 112),
    (A.Qnn_TensorV2_t, "sparseParams", 120),
    (A.Qnn_TensorV2_t, "isProduced", 132),
    (A.Qnn_Tensor_t, "u", 8),
    (A.QnnSystemContext_GraphInfoV3_t, "graphBlobInfoSize", 56),
    (A.QnnSystemContext_GraphInfoV3_t, "graphBlobInfo", 64),
    (A.QnnSystemContext_BinaryInfoV1_t, "contextBlobVersion", 60),
    (A.QnnSystemContext_BinaryInfoV1_t, "contextBlobSize", 88),
    (A.QnnSystemContext_BinaryInfoV1_t, "graphs", 120),
    (A.QnnSystemContext_BinaryInfoV3_t, "contextBlobVersion", 48),
    (A.QnnSystemContext_BinaryInfoV3_t, "contextBlobSize", 64),
    (A.QnnSystemContext_BinaryInfoV3_t, "numGraphs", 88),
    (A.QnnSystemContext_BinaryInfoV3_t, "graphs", 96),
    (A.QnnSystemContext_BinaryInfoV3_t, "contextMetadata", 120),
    (A.QnnSystemContext_BinaryInfoV3_t, "socModel", 128),
    (A.QnnHtpDevice_CustomConfig_t, "socModel_v243", 4),
    (A.QnnHtpDevice_CustomConfig_t, "socModel", 8),
    (A.QnnHtpPerfInfrastructure_PowerConfig_t, "u", 4),
    (A.QnnHtpDevice_Infrastructure_t, "perfInfra", 8),
    (A.Qnn_MemDescriptor_t, "dataType", 24),
    (A.QnnDevice_PlatformInfo_t, "v1", 8),
    (A.QnnDevice_HardwareDeviceInfo_t, "v1", 8),
    (A.QnnDevice_HardwareDeviceInfoV1_t, "cores", 16),
    (A.QnnDevice_CoreInfo_t, "v1", 8),
    (A.QnnHtpDevice_DeviceInfoExtension_t, "arch", 24),
    (A.Qnn_MemDescriptor_t, "u", 32),
    (A.QnnInterface_t, "apiVersion", 16),
    (A.QnnInterface_t, "QNN_INTERFACE_VER_NAME", 40),
    (A.QnnSystemInterface_t, "QNN_SYSTEM_INTERFACE_VER_NAME", 32),
]

# Function-table positions quoted in the fact sheet (index → name).
CORE_ORDER = {
    0: "propertyHasCapability",
    3: "backendGetApiVersion",
    4: "backendGetBuildId",
    8: "backendFree",
    13: "contextCreateFromBinary",
    14: "contextFree",
    20: "graphRetrieve",
    21: "graphExecute",
    25: "logCreate",
    27: "logFree",
    35: "memRegister",
    39: "deviceGetInfrastructure",
    40: "deviceCreate",
    43: "deviceFree",
    48: "errorGetMessage",
    63: "contextGetProperty",
    70: "contextFreeBinarySectionUpdate",
}
SYSTEM_ORDER = {
    0: "systemContextCreate",
    1: "systemContextGetBinaryInfo",
    3: "systemContextFree",
}


@pytest.mark.parametrize(
    "struct,size", SIZES, ids=lambda v: getattr(v, "__name__", str(v))
)
def test_struct_size_matches_fact_sheet(struct: type, size: int) -> None:
    assert C.sizeof(struct) == size


@pytest.mark.parametrize("struct,field,offset", OFFSETS)
def test_field_offset_matches_fact_sheet(struct: type, field: str, offset: int) -> None:
    assert getattr(struct, field).offset == offset


def test_function_tables_follow_header_order() -> None:
    assert len(A.CORE_FUNCTIONS) == 71 and len(A.SYSTEM_FUNCTIONS) == 16
    for i, name in CORE_ORDER.items():
        assert A.CORE_FUNCTIONS[i][0] == name
        assert getattr(A.QNN_INTERFACE_VER_TYPE, name).offset == 8 * i
    for i, name in SYSTEM_ORDER.items():
        assert A.SYSTEM_FUNCTIONS[i][0] == name


def test_header_version_is_stamped() -> None:
    assert (A.QNN_API_VERSION_MAJOR, A.QNN_API_VERSION_MINOR) == (2, 32)
    assert A.QNN_HEADER_SDK == "2.43"


def test_error_names_cover_system_and_perf_codes() -> None:
    assert A.QNN_ERROR_NAMES[30010] == "QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY"
    assert A.QNN_ERROR_NAMES[13004].endswith("UNSUPPORTED")
    assert A.QNN_ERROR_NAMES[5010] == "QNN_CONTEXT_ERROR_INVALID_CONFIG"


def test_datatype_names_are_derived_from_the_constants() -> None:
    assert A.DATATYPE_NAMES[A.QNN_DATATYPE_FLOAT_16] == "FLOAT_16"
    assert A.DATATYPE_NAMES[A.QNN_DATATYPE_UFIXED_POINT_8] == "UFIXED_POINT_8"
