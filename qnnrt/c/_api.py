"""Mechanical ctypes mirror of the QNN C API (the subset qnnrt uses, in header order).

Written from the facts in ``docs/qnn.md`` (QNN SDK 2.43 headers: core API 2.32,
HTP API 5.43, system API 1.7; checked against the 2.51 runtime shipped by PyPI
``onnxruntime-qnn`` 2.7.0: core API 2.40, HTP 5.51, system 1.15).  Names keep their
C spelling so a symbol from the Qualcomm docs greps straight into this file.  Nothing
here calls C or loads a library; the Pythonic layer lives in the sibling modules.

Layout notes that bite (see the fact sheet for the evidence):
* function tables are append-only within a major version, so they are declared as a
  prefix and never sized from ``sizeof``;
* ``QnnHtpDevice_CustomConfig_t`` moved its union from +4 (2.43) to +8 (2.51);
* BinaryInfo v3 is *not* a superset of v1/v2 (fields move), so always switch on version;
* functions that take a struct by value are declared ``c_void_p`` (never called).
"""

from __future__ import annotations

import ctypes as C
from typing import Final

# --------------------------------------------------------------------------- versions
#: Header set this mirror was written against (QNN SDK 2.43).
QNN_HEADER_SDK: Final = "2.43"
QNN_API_VERSION_MAJOR: Final = 2
QNN_API_VERSION_MINOR: Final = 32
QNN_API_VERSION_PATCH: Final = 0
QNN_SYSTEM_API_VERSION_MAJOR: Final = 1
QNN_SYSTEM_API_VERSION_MINOR: Final = 7
QNN_SYSTEM_API_VERSION_PATCH: Final = 0
QNN_HTP_API_VERSION_MAJOR: Final = 5
QNN_HTP_API_VERSION_MINOR: Final = 43
QNN_HTP_API_VERSION_PATCH: Final = 0

# --------------------------------------------------------------------------- scalars
Qnn_ErrorHandle_t = C.c_uint64
Qnn_Handle_t = C.c_void_p  # every QNN handle is an opaque pointer (small ints on HTP)
QnnSystemContext_Handle_t = C.c_void_p
Qnn_ContextBinarySize_t = C.c_uint64
Qnn_Enum_t = C.c_int32  # 4-byte C enums (values up to 0x7FFFFFFF)

QNN_SUCCESS: Final = 0
QNN_BACKEND_ID_HTP: Final = 6

# --------------------------------------------------------------------------- enums
# Qnn_DataType_t (QnnTypes.h): low byte = bit width written as hex digits.
QNN_DATATYPE_INT_8: Final = 0x0008
QNN_DATATYPE_INT_16: Final = 0x0016
QNN_DATATYPE_INT_32: Final = 0x0032
QNN_DATATYPE_INT_64: Final = 0x0064
QNN_DATATYPE_UINT_8: Final = 0x0108
QNN_DATATYPE_UINT_16: Final = 0x0116
QNN_DATATYPE_UINT_32: Final = 0x0132
QNN_DATATYPE_UINT_64: Final = 0x0164
QNN_DATATYPE_FLOAT_16: Final = 0x0216
QNN_DATATYPE_BFLOAT_16: Final = 0x0226
QNN_DATATYPE_FLOAT_32: Final = 0x0232
QNN_DATATYPE_FLOAT_64: Final = 0x0264
QNN_DATATYPE_SFIXED_POINT_4: Final = 0x0304
QNN_DATATYPE_SFIXED_POINT_8: Final = 0x0308
QNN_DATATYPE_SFIXED_POINT_16: Final = 0x0316
QNN_DATATYPE_SFIXED_POINT_32: Final = 0x0332
QNN_DATATYPE_UFIXED_POINT_4: Final = 0x0404
QNN_DATATYPE_UFIXED_POINT_8: Final = 0x0408
QNN_DATATYPE_UFIXED_POINT_16: Final = 0x0416
QNN_DATATYPE_UFIXED_POINT_32: Final = 0x0432
QNN_DATATYPE_BOOL_8: Final = 0x0508
QNN_DATATYPE_STRING: Final = 0x0608
QNN_DATATYPE_UNDEFINED: Final = 0x7FFFFFFF

DATATYPE_NAMES: Final[dict[int, str]] = {
    v: k.removeprefix("QNN_DATATYPE_")
    for k, v in dict(globals()).items()
    if k.startswith("QNN_DATATYPE_")
}

# Qnn_TensorType_t
QNN_TENSOR_TYPE_APP_WRITE: Final = 0
QNN_TENSOR_TYPE_APP_READ: Final = 1
QNN_TENSOR_TYPE_APP_READWRITE: Final = 2
QNN_TENSOR_TYPE_NATIVE: Final = 3
QNN_TENSOR_TYPE_STATIC: Final = 4
QNN_TENSOR_TYPE_NULL: Final = 5

# Qnn_TensorDataFormat_t (#defines)
QNN_TENSOR_DATA_FORMAT_DENSE: Final = 0

# Qnn_TensorMemType_t
QNN_TENSORMEMTYPE_RAW: Final = 0
QNN_TENSORMEMTYPE_MEMHANDLE: Final = 1
QNN_TENSORMEMTYPE_RETRIEVE_RAW: Final = 2

# Qnn_TensorVersion_t
QNN_TENSOR_VERSION_1: Final = 1
QNN_TENSOR_VERSION_2: Final = 2

# Qnn_Definition_t / Qnn_QuantizationEncoding_t
QNN_DEFINITION_IMPL_GENERATED: Final = 0
QNN_DEFINITION_DEFINED: Final = 1
QNN_DEFINITION_UNDEFINED: Final = 0x7FFFFFFF
QNN_QUANTIZATION_ENCODING_SCALE_OFFSET: Final = 0
QNN_QUANTIZATION_ENCODING_AXIS_SCALE_OFFSET: Final = 1
QNN_QUANTIZATION_ENCODING_BW_SCALE_OFFSET: Final = 2
QNN_QUANTIZATION_ENCODING_BW_AXIS_SCALE_OFFSET: Final = 3
QNN_QUANTIZATION_ENCODING_BLOCK: Final = 4
QNN_QUANTIZATION_ENCODING_BLOCKWISE_EXPANSION: Final = 5
QNN_QUANTIZATION_ENCODING_VECTOR: Final = 6
QNN_QUANTIZATION_ENCODING_UNDEFINED: Final = 0x7FFFFFFF

QUANT_ENCODING_NAMES: Final[dict[int, str]] = {
    v: k.removeprefix("QNN_QUANTIZATION_ENCODING_")
    for k, v in dict(globals()).items()
    if k.startswith("QNN_QUANTIZATION_ENCODING_")
}

# QnnLog_Level_t
QNN_LOG_LEVEL_ERROR: Final = 1
QNN_LOG_LEVEL_WARN: Final = 2
QNN_LOG_LEVEL_INFO: Final = 3
QNN_LOG_LEVEL_VERBOSE: Final = 4
QNN_LOG_LEVEL_DEBUG: Final = 5

# QnnProfile levels, units and event types (QnnProfile.h)
QNN_PROFILE_LEVEL_BASIC: Final = 1
QNN_PROFILE_LEVEL_DETAILED: Final = 2
QNN_PROFILE_EVENTUNIT_MICROSEC: Final = 1
QNN_PROFILE_EVENTTYPE_EXECUTE: Final = 400
QNN_HTP_PROFILE_EVENTTYPE_GRAPH_EXECUTE_ACCEL_TIME_MICROSEC: Final = 3004

# Qnn_MemType_t (QnnMem.h)
QNN_MEM_TYPE_ION: Final = 1
QNN_MEM_TYPE_CUSTOM: Final = 2
QNN_MEM_TYPE_DMA_BUF: Final = 3
QNN_MEM_INVALID_FD: Final = -1

# Property keys (QnnProperty.h): group base + n
QNN_PROPERTY_GROUP_DEVICE: Final = 1501
QNN_PROPERTY_DEVICE_SUPPORT_INFRASTRUCTURE: Final = 1502
QNN_PROPERTY_MEM_TYPE_ION: Final = 1102
QNN_PROPERTY_MEM_TYPE_DMA_BUF: Final = 1104
QNN_PROPERTY_TENSOR_SUPPORT_MEMHANDLE_TYPE: Final = 502

# Config options (QnnBackend.h / QnnDevice.h / QnnContext.h)
QNN_BACKEND_CONFIG_OPTION_CUSTOM: Final = 0
QNN_DEVICE_CONFIG_OPTION_CUSTOM: Final = 0
QNN_DEVICE_CONFIG_OPTION_PLATFORM_INFO: Final = 1
QNN_CONTEXT_CONFIG_OPTION_CUSTOM: Final = 0
QNN_CONTEXT_CONFIG_OPTION_PRIORITY: Final = 1
QNN_CONTEXT_CONFIG_ENABLE_GRAPHS: Final = 5
QNN_PRIORITY_LOW: Final = 0
QNN_PRIORITY_NORMAL: Final = 100
QNN_PRIORITY_NORMAL_HIGH: Final = 150
QNN_PRIORITY_HIGH: Final = 200

# System-context versions
QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_1: Final = 1
QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_2: Final = 2
QNN_SYSTEM_CONTEXT_BINARY_INFO_VERSION_3: Final = 3
QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_1: Final = 1
QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_2: Final = 2
QNN_SYSTEM_CONTEXT_GRAPH_INFO_VERSION_3: Final = 3

# HTP: QnnHtpContext.h, QnnHtpDevice.h, QnnHtpSystemContext.h,
# QnnHtpPerfInfrastructure.h
QNN_HTP_CONTEXT_CONFIG_OPTION_WEIGHT_SHARING_ENABLED: Final = 1
QNN_HTP_CONTEXT_CONFIG_OPTION_REGISTER_MULTI_CONTEXTS: Final = 2
QNN_HTP_CONTEXT_CONFIG_OPTION_FILE_READ_MEMORY_BUDGET: Final = 3
QNN_HTP_CONTEXT_CONFIG_OPTION_SHARE_RESOURCES: Final = 5
QNN_HTP_CONTEXT_CONFIG_OPTION_IO_MEM_ESTIMATION: Final = 6
QNN_HTP_CONTEXT_GET_PROP_MAX_SPILLFILL_BUFFER_SIZE: Final = 2
QNN_HTP_DEVICE_CONFIG_OPTION_SOC: Final = 0
QNN_HTP_DEVICE_CONFIG_OPTION_ARCH: Final = 1
QNN_HTP_SYSTEM_CONTEXT_GRAPH_BLOB_INFO_V1: Final = 1
QNN_HTP_SYSTEM_CONTEXT_GRAPH_BLOB_INFO_V2: Final = 2
QNN_HTP_DEVICE_INFRASTRUCTURE_TYPE_PERF: Final = 0
QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_DCVS_V3: Final = 1
QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_CONTROL_LATENCY: Final = 2
QNN_HTP_PERF_INFRASTRUCTURE_POWER_CONFIGOPTION_RPC_POLLING_TIME: Final = 3
QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_ADJUST_UP_DOWN: Final = 0x1
QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_POWER_SAVER: Final = 0x4
QNN_HTP_PERF_INFRASTRUCTURE_POWERMODE_PERFORMANCE: Final = 0x10
DCVS_VOLTAGE_CORNER_DISABLE: Final = 0x10
DCVS_VOLTAGE_VCORNER_MIN_VOLTAGE_CORNER: Final = 0x20
DCVS_VOLTAGE_VCORNER_SVS: Final = 0x40
DCVS_VOLTAGE_VCORNER_NOM: Final = 0x60
DCVS_VOLTAGE_VCORNER_TURBO: Final = 0x80
DCVS_VOLTAGE_VCORNER_MAX_VOLTAGE_CORNER: Final = 0xA0

# --------------------------------------------------------------------------- errors
# QnnCommon.h + per-component headers.  Codes are the low 16 bits of Qnn_ErrorHandle_t.
QNN_ERROR_NAMES: Final[dict[int, str]] = {
    1000: "QNN_COMMON_ERROR_NOT_SUPPORTED",
    1002: "QNN_COMMON_ERROR_MEM_ALLOC",
    1003: "QNN_COMMON_ERROR_SYSTEM",
    1004: "QNN_COMMON_ERROR_INVALID_ARGUMENT",
    1005: "QNN_COMMON_ERROR_OPERATION_NOT_PERMITTED",
    1006: "QNN_COMMON_ERROR_PLATFORM_NOT_SUPPORTED",
    1007: "QNN_COMMON_ERROR_SYSTEM_COMMUNICATION",
    1008: "QNN_COMMON_ERROR_INCOMPATIBLE_BINARIES",
    1009: "QNN_COMMON_ERROR_LOADING_BINARIES",
    1010: "QNN_COMMON_ERROR_RESOURCE_UNAVAILABLE",
    1011: "QNN_COMMON_ERROR_SYSTEM_COMMUNICATION_FATAL",
    1100: "QNN_COMMON_ERROR_GENERAL",
    2000: "QNN_PROPERTY_ERROR_UNKNOWN_KEY",
    4000: "QNN_BACKEND_ERROR_CANNOT_INITIALIZE",
    4002: "QNN_BACKEND_ERROR_TERMINATE_FAILED",
    4003: "QNN_BACKEND_ERROR_NOT_SUPPORTED",
    4004: "QNN_BACKEND_ERROR_INVALID_ARGUMENT",
    4005: "QNN_BACKEND_ERROR_OP_PACKAGE_NOT_FOUND",
    4006: "QNN_BACKEND_ERROR_OP_PACKAGE_IF_PROVIDER_NOT_FOUND",
    4007: "QNN_BACKEND_ERROR_OP_PACKAGE_REGISTRATION_FAILED",
    4008: "QNN_BACKEND_ERROR_OP_PACKAGE_UNSUPPORTED_VERSION",
    4009: "QNN_BACKEND_ERROR_OP_PACKAGE_DUPLICATE",
    4010: "QNN_BACKEND_ERROR_INCONSISTENT_CONFIG",
    4011: "QNN_BACKEND_ERROR_INVALID_HANDLE",
    4012: "QNN_BACKEND_ERROR_INVALID_CONFIG",
    5000: "QNN_CONTEXT_ERROR_INVALID_ARGUMENT",
    5001: "QNN_CONTEXT_ERROR_CTX_DOES_NOT_EXIST",
    5002: "QNN_CONTEXT_ERROR_INVALID_HANDLE",
    5003: "QNN_CONTEXT_ERROR_NOT_FINALIZED",
    5004: "QNN_CONTEXT_ERROR_BINARY_VERSION",
    5005: "QNN_CONTEXT_ERROR_CREATE_FROM_BINARY",
    5006: "QNN_CONTEXT_ERROR_GET_BINARY_SIZE_FAILED",
    5007: "QNN_CONTEXT_ERROR_GET_BINARY_FAILED",
    5008: "QNN_CONTEXT_ERROR_BINARY_CONFIGURATION",
    5009: "QNN_CONTEXT_ERROR_SET_PROFILE",
    5010: "QNN_CONTEXT_ERROR_INVALID_CONFIG",
    5011: "QNN_CONTEXT_ERROR_BINARY_SUBOPTIMAL",
    5012: "QNN_CONTEXT_ERROR_ABORTED",
    5013: "QNN_CONTEXT_ERROR_TIMED_OUT",
    5014: "QNN_CONTEXT_ERROR_INCREMENT_INVALID_BUFFER",
    6000: "QNN_GRAPH_ERROR_INVALID_ARGUMENT",
    6001: "QNN_GRAPH_ERROR_INVALID_HANDLE",
    6002: "QNN_GRAPH_ERROR_GRAPH_DOES_NOT_EXIST",
    6003: "QNN_GRAPH_ERROR_INVALID_NAME",
    6004: "QNN_GRAPH_ERROR_INVALID_TENSOR",
    6005: "QNN_GRAPH_ERROR_INVALID_OP_CONFIG",
    6006: "QNN_GRAPH_ERROR_SET_PROFILE",
    6007: "QNN_GRAPH_ERROR_UNCONNECTED_NODE",
    6020: "QNN_GRAPH_ERROR_CREATE_FAILED",
    6021: "QNN_GRAPH_ERROR_OPTIMIZATION_FAILED",
    6022: "QNN_GRAPH_ERROR_FINALIZE_FAILED",
    6023: "QNN_GRAPH_ERROR_GRAPH_NOT_FINALIZED",
    6024: "QNN_GRAPH_ERROR_GRAPH_FINALIZED",
    6025: "QNN_GRAPH_ERROR_EXECUTION_ASYNC_FIFO_FULL",
    6030: "QNN_GRAPH_ERROR_SIGNAL_IN_USE",
    6031: "QNN_GRAPH_ERROR_ABORTED",
    6032: "QNN_GRAPH_ERROR_PROFILE_IN_USE",
    6033: "QNN_GRAPH_ERROR_TIMED_OUT",
    6034: "QNN_GRAPH_ERROR_SUBGRAPH",
    6035: "QNN_GRAPH_ERROR_DISABLED",
    6036: "QNN_GRAPH_ERROR_DYNAMIC_TENSOR_SHAPE",
    6037: "QNN_GRAPH_ERROR_TENSOR_SPARSITY",
    6038: "QNN_GRAPH_ERROR_EARLY_TERMINATION",
    6039: "QNN_GRAPH_ERROR_INVALID_CONTEXT",
    7001: "QNN_TENSOR_ERROR_INVALID_HANDLE",
    7002: "QNN_TENSOR_ERROR_DOES_NOT_EXIST",
    7003: "QNN_TENSOR_ERROR_ALREADY_EXISTS",
    7004: "QNN_TENSOR_ERROR_INVALID_TENSOR_PARAM",
    7005: "QNN_TENSOR_ERROR_UNSUPPORTED_TENSOR_PARAM",
    7006: "QNN_TENSOR_ERROR_NAME_HASH_COLLISION",
    7007: "QNN_TENSOR_ERROR_INCOMPATIBLE_TENSOR_UPDATE",
    8000: "QNN_MEM_ERROR_INVALID_ARGUMENT",
    8001: "QNN_MEM_ERROR_INVALID_HANDLE",
    8002: "QNN_MEM_ERROR_ALREADY_REGISTERED",
    8003: "QNN_MEM_ERROR_MAPPING",
    8004: "QNN_MEM_ERROR_INVALID_SHAPE",
    8005: "QNN_MEM_ERROR_UNSUPPORTED_MEMTYPE",
    9000: "QNN_SIGNAL_ERROR_SIGNAL_IN_USE",
    9001: "QNN_SIGNAL_ERROR_SIGNAL_IDLE",
    9002: "QNN_SIGNAL_ERROR_INVALID_ARGUMENT",
    9003: "QNN_SIGNAL_ERROR_INVALID_HANDLE",
    9004: "QNN_SIGNAL_ERROR_SIGNAL_TIMEOUT",
    9005: "QNN_SIGNAL_ERROR_INCOMPATIBLE_SIGNAL_TYPE",
    10000: "QNN_ERROR_INVALID_ARGUMENT",
    10001: "QNN_ERROR_INVALID_ERROR_HANDLE",
    11002: "QNN_LOG_ERROR_INITIALIZATION",
    11003: "QNN_LOG_ERROR_INVALID_ARGUMENT",
    11004: "QNN_LOG_ERROR_INVALID_HANDLE",
    12000: "QNN_PROFILE_ERROR_INVALID_HANDLE",
    12001: "QNN_PROFILE_ERROR_HANDLE_IN_USE",
    12002: "QNN_PROFILE_ERROR_INCOMPATIBLE_EVENT",
    13000: "QNN_HTP_PERF_INFRASTRUCTURE_ERROR_INVALID_HANDLE_PTR",
    13001: "QNN_HTP_PERF_INFRASTRUCTURE_ERROR_INVALID_INPUT",
    13002: "QNN_HTP_PERF_INFRASTRUCTURE_ERROR_UNSUPPORTED_CONFIG",
    13003: "QNN_HTP_PERF_INFRASTRUCTURE_ERROR_TRANSPORT",
    13004: "QNN_HTP_PERF_INFRASTRUCTURE_ERROR_UNSUPPORTED",
    13005: "QNN_HTP_PERF_INFRASTRUCTURE_ERROR_MEM_ALLOC",
    13006: "QNN_HTP_PERF_INFRASTRUCTURE_ERROR_FAILED",
    14000: "QNN_DEVICE_ERROR_INVALID_HANDLE",
    14001: "QNN_DEVICE_ERROR_INVALID_CONFIG",
    14002: "QNN_DEVICE_ERROR_HARDWARE_UNAVAILABLE",
    14003: "QNN_DEVICE_ERROR_ASSOCIATED_TO_CONTEXT",
    15000: "QNN_GLOBAL_CONFIG_ERROR_INVALID_CONFIG",
    30000: "QNN_SYSTEM_ERROR_INVALID_HANDLE",
    30001: "QNN_SYSTEM_ERROR_INVALID_ARGUMENT",
    30002: "QNN_SYSTEM_CONTEXT_ERROR_OPERATION_FAILED",
    30010: "QNN_SYSTEM_CONTEXT_ERROR_MALFORMED_BINARY",
    60000: "QNN_INTERFACE_ERROR_NOT_SUPPORTED",
}

# --------------------------------------------------------------------------- structs


class Qnn_Version_t(C.Structure):
    _fields_ = [("major", C.c_uint32), ("minor", C.c_uint32), ("patch", C.c_uint32)]


class Qnn_ApiVersion_t(C.Structure):
    _fields_ = [
        ("coreApiVersion", Qnn_Version_t),
        ("backendApiVersion", Qnn_Version_t),
    ]


class Qnn_ClientBuffer_t(C.Structure):
    _fields_ = [("data", C.c_void_p), ("dataSize", C.c_uint32)]


class Qnn_ScaleOffset_t(C.Structure):
    _fields_ = [("scale", C.c_float), ("offset", C.c_int32)]


class Qnn_AxisScaleOffset_t(C.Structure):
    _fields_ = [
        ("axis", C.c_int32),
        ("numScaleOffsets", C.c_uint32),
        ("scaleOffset", C.POINTER(Qnn_ScaleOffset_t)),
    ]


class Qnn_BwScaleOffset_t(C.Structure):
    _fields_ = [("bitwidth", C.c_uint32), ("scale", C.c_float), ("offset", C.c_int32)]


class Qnn_BwAxisScaleOffset_t(C.Structure):
    _fields_ = [
        ("bitwidth", C.c_uint32),
        ("axis", C.c_int32),
        ("numElements", C.c_uint32),
        ("scales", C.POINTER(C.c_float)),
        ("offsets", C.POINTER(C.c_int32)),
    ]


class Qnn_BlockEncoding_t(C.Structure):
    _fields_ = [
        ("blockSize", C.POINTER(C.c_uint32)),
        ("blockScaleOffset", C.POINTER(Qnn_ScaleOffset_t)),
    ]


class _QuantizeParamsUnion(C.Union):
    # The largest inline member is 32 B; newer encodings are held by pointer.
    _fields_ = [
        ("scaleOffsetEncoding", Qnn_ScaleOffset_t),
        ("axisScaleOffsetEncoding", Qnn_AxisScaleOffset_t),
        ("bwScaleOffsetEncoding", Qnn_BwScaleOffset_t),
        ("bwAxisScaleOffsetEncoding", Qnn_BwAxisScaleOffset_t),
        ("blockEncoding", Qnn_BlockEncoding_t),
        ("blockwiseExpansion", C.c_void_p),
        ("vectorEncoding", C.c_void_p),
    ]


class Qnn_QuantizeParams_t(C.Structure):
    _anonymous_ = ("u",)
    _fields_ = [
        ("encodingDefinition", Qnn_Enum_t),
        ("quantizationEncoding", Qnn_Enum_t),
        ("u", _QuantizeParamsUnion),
    ]


class _TensorMemUnion(C.Union):
    _fields_ = [("clientBuf", Qnn_ClientBuffer_t), ("memHandle", C.c_void_p)]


class Qnn_TensorV1_t(C.Structure):
    _anonymous_ = ("m",)
    _fields_ = [
        ("id", C.c_uint32),
        ("name", C.c_char_p),
        ("type", Qnn_Enum_t),
        ("dataFormat", C.c_uint32),
        ("dataType", Qnn_Enum_t),
        ("quantizeParams", Qnn_QuantizeParams_t),
        ("rank", C.c_uint32),
        ("dimensions", C.POINTER(C.c_uint32)),
        ("memType", Qnn_Enum_t),
        ("m", _TensorMemUnion),
    ]


class Qnn_SparseParams_t(C.Structure):
    _fields_ = [
        ("type", Qnn_Enum_t),
        ("numSpecifiedElements", C.c_uint32),
        ("numSparseDimensions", C.c_uint32),
    ]


class Qnn_TensorV2_t(C.Structure):
    _anonymous_ = ("m",)
    _fields_ = Qnn_TensorV1_t._fields_ + [
        ("isDynamicDimensions", C.POINTER(C.c_uint8)),
        ("sparseParams", Qnn_SparseParams_t),
        ("isProduced", C.c_uint8),
    ]


class _TensorUnion(C.Union):
    _fields_ = [("v1", Qnn_TensorV1_t), ("v2", Qnn_TensorV2_t)]


class Qnn_Tensor_t(C.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("version", Qnn_Enum_t), ("u", _TensorUnion)]


class QnnSystemContext_GraphInfoV1_t(C.Structure):
    _fields_ = [
        ("graphName", C.c_char_p),
        ("numGraphInputs", C.c_uint32),
        ("graphInputs", C.POINTER(Qnn_Tensor_t)),
        ("numGraphOutputs", C.c_uint32),
        ("graphOutputs", C.POINTER(Qnn_Tensor_t)),
    ]


class QnnSystemContext_GraphInfoV2_t(C.Structure):
    _fields_ = QnnSystemContext_GraphInfoV1_t._fields_ + [
        ("numUpdateableTensors", C.c_uint32),
        ("updateableTensors", C.POINTER(Qnn_Tensor_t)),
    ]


class QnnSystemContext_GraphInfoV3_t(C.Structure):
    _fields_ = QnnSystemContext_GraphInfoV2_t._fields_ + [
        ("graphBlobInfoSize", C.c_uint32),
        ("graphBlobInfo", C.c_void_p),
        ("startOpIndex", C.c_uint32),
        ("endOpIndex", C.c_uint32),
    ]


class _GraphInfoUnion(C.Union):
    _fields_ = [
        ("graphInfoV1", QnnSystemContext_GraphInfoV1_t),
        ("graphInfoV2", QnnSystemContext_GraphInfoV2_t),
        ("graphInfoV3", QnnSystemContext_GraphInfoV3_t),
    ]


class QnnSystemContext_GraphInfo_t(C.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("version", Qnn_Enum_t), ("u", _GraphInfoUnion)]


class QnnDevice_CoreInfoV1_t(C.Structure):
    _fields_ = [
        ("coreId", C.c_uint32),
        ("coreType", C.c_uint32),
        ("coreInfoExtension", C.c_void_p),
    ]


class QnnDevice_CoreInfo_t(C.Structure):
    _fields_ = [("version", Qnn_Enum_t), ("v1", QnnDevice_CoreInfoV1_t)]


class QnnDevice_HardwareDeviceInfoV1_t(C.Structure):
    _fields_ = [
        ("deviceId", C.c_uint32),
        ("deviceType", C.c_uint32),
        ("numCores", C.c_uint32),
        ("cores", C.POINTER(QnnDevice_CoreInfo_t)),
        ("deviceInfoExtension", C.c_void_p),
    ]


class QnnDevice_HardwareDeviceInfo_t(C.Structure):
    _fields_ = [("version", Qnn_Enum_t), ("v1", QnnDevice_HardwareDeviceInfoV1_t)]


class QnnDevice_PlatformInfoV1_t(C.Structure):
    _fields_ = [
        ("numHwDevices", C.c_uint32),
        ("hwDevices", C.POINTER(QnnDevice_HardwareDeviceInfo_t)),
    ]


class QnnDevice_PlatformInfo_t(C.Structure):
    _fields_ = [("version", Qnn_Enum_t), ("v1", QnnDevice_PlatformInfoV1_t)]


class QnnHtpDevice_DeviceInfoExtension_t(C.Structure):
    _fields_ = [
        ("devType", Qnn_Enum_t),
        ("vtcmSize", C.c_size_t),  # MB
        ("socModel", C.c_uint32),
        ("signedPdSupport", C.c_bool),
        ("dlbcSupport", C.c_bool),
        ("arch", Qnn_Enum_t),
    ]


class QnnSystemContext_BinaryInfoV1_t(C.Structure):
    _fields_ = [
        ("backendId", C.c_uint32),
        ("buildId", C.c_char_p),
        ("coreApiVersion", Qnn_Version_t),
        ("backendApiVersion", Qnn_Version_t),
        ("socVersion", C.c_char_p),
        ("hwInfoBlobVersion", Qnn_Version_t),
        ("contextBlobVersion", Qnn_Version_t),
        ("hwInfoBlobSize", C.c_uint32),
        ("hwInfoBlob", C.c_void_p),
        ("contextBlobSize", C.c_uint64),
        ("numContextTensors", C.c_uint32),
        ("contextTensors", C.POINTER(Qnn_Tensor_t)),
        ("numGraphs", C.c_uint32),
        ("graphs", C.POINTER(QnnSystemContext_GraphInfo_t)),
    ]


class QnnSystemContext_BinaryInfoV2_t(C.Structure):
    _fields_ = QnnSystemContext_BinaryInfoV1_t._fields_ + [
        ("platformInfo", C.POINTER(QnnDevice_PlatformInfo_t)),
    ]


class QnnSystemContext_BinaryInfoV3_t(C.Structure):
    # Not a superset of v1/v2: the hwInfoBlob fields are gone and later fields move.
    _fields_ = [
        ("backendId", C.c_uint32),
        ("buildId", C.c_char_p),
        ("coreApiVersion", Qnn_Version_t),
        ("backendApiVersion", Qnn_Version_t),
        ("socVersion", C.c_char_p),
        ("contextBlobVersion", Qnn_Version_t),
        ("contextBlobSize", C.c_uint64),
        ("numContextTensors", C.c_uint32),
        ("contextTensors", C.POINTER(Qnn_Tensor_t)),
        ("numGraphs", C.c_uint32),
        ("graphs", C.POINTER(QnnSystemContext_GraphInfo_t)),
        ("platformInfo", C.POINTER(QnnDevice_PlatformInfo_t)),
        ("contextMetadataSize", C.c_uint32),
        ("contextMetadata", C.c_void_p),
        ("socModel", C.c_uint32),
    ]


class _BinaryInfoUnion(C.Union):
    _fields_ = [
        ("contextBinaryInfoV1", QnnSystemContext_BinaryInfoV1_t),
        ("contextBinaryInfoV2", QnnSystemContext_BinaryInfoV2_t),
        ("contextBinaryInfoV3", QnnSystemContext_BinaryInfoV3_t),
    ]


class QnnSystemContext_BinaryInfo_t(C.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("version", Qnn_Enum_t), ("u", _BinaryInfoUnion)]


class QnnHtpSystemContext_GraphBlobInfoV1_t(C.Structure):
    _fields_ = [
        ("spillFillBufferSize", C.c_uint64),
        ("vtcmSize", C.c_uint32),  # bytes
        ("optimizationLevel", C.c_uint32),
        ("htpDlbc", C.c_uint8),
        ("numHvxThreads", C.c_uint64),
    ]


class QnnHtpSystemContext_GraphBlobInfo_t(C.Structure):
    """Version word + V1 payload (40 B); a self-versioned V2 struct may follow."""

    _fields_ = [("version", Qnn_Enum_t), ("v1", QnnHtpSystemContext_GraphBlobInfoV1_t)]


class QnnHtpSystemContext_GraphBlobInfoV2_t(C.Structure):
    _fields_ = [
        ("version", Qnn_Enum_t),
        ("nativeKChannelSize", C.c_uint64),
        ("nativeVChannelSize", C.c_uint64),
        ("isSafeShareIO", C.c_uint32),
        ("ioTensorSize", C.c_uint64),
        ("opDataSize", C.c_uint64),
        ("constSize", C.c_uint64),
        ("ddrTensorSize", C.c_uint64),
        ("sharedWeightsSize", C.c_uint64),
    ]


class QnnHtpSystemContext_ContextBlobInfo_t(C.Structure):
    _fields_ = [("version", Qnn_Enum_t), ("dspArch", C.c_uint32)]


# Config containers: enum option @0, union @8, 16 B each.
class QnnBackend_Config_t(C.Structure):
    _fields_ = [("option", Qnn_Enum_t), ("customConfig", C.c_void_p)]


class QnnDevice_Config_t(C.Structure):
    _fields_ = [("option", Qnn_Enum_t), ("customConfig", C.c_void_p)]


class _ContextConfigUnion(C.Union):
    _fields_ = [
        ("customConfig", C.c_void_p),
        ("priority", Qnn_Enum_t),
        ("enableGraphs", C.POINTER(C.c_char_p)),
        ("memoryLimitHint", C.c_uint64),
    ]


class QnnContext_Config_t(C.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("option", Qnn_Enum_t), ("u", _ContextConfigUnion)]


class QnnGraph_Config_t(C.Structure):
    _fields_ = [("option", Qnn_Enum_t), ("customConfig", C.c_void_p)]


class QnnContext_Property_t(C.Structure):
    _fields_ = [("option", Qnn_Enum_t), ("customProperty", C.c_void_p)]


class QnnHtpContext_GroupRegistration_t(C.Structure):
    _fields_ = [("firstGroupHandle", C.c_void_p), ("maxSpillFillBuffer", C.c_uint64)]


class _HtpContextCustomUnion(C.Union):
    _fields_ = [
        ("groupRegistration", QnnHtpContext_GroupRegistration_t),
        ("fileReadMemoryBudgetInMb", C.c_uint64),
        ("boolValue", C.c_bool),
    ]


class QnnHtpContext_CustomConfig_t(C.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("option", Qnn_Enum_t), ("u", _HtpContextCustomUnion)]


class QnnHtpContext_CustomProperty_t(C.Structure):
    _fields_ = [("option", Qnn_Enum_t), ("value", C.c_uint64)]


class QnnHtpDevice_CustomConfig_t(C.Structure):
    """2.51 runtime layout: union at +8 (16 B).  The 2.43 header had it at +4.

    ``socModel_v243`` overlays the old offset so SOC can be written at both (the
    portable trick from the fact sheet, pitfall 2).
    """

    _fields_ = [
        ("option", Qnn_Enum_t),
        ("socModel_v243", C.c_uint32),
        ("socModel", C.c_uint32),
        ("arch", C.c_uint32),
    ]


class QnnHtpPerfInfrastructure_DcvsV3_t(C.Structure):
    _fields_ = [
        (name, C.c_uint32)
        for name in (
            "contextId",
            "setDcvsEnable",
            "dcvsEnable",
            "powerMode",
            "setSleepLatency",
            "sleepLatency",
            "setSleepDisable",
            "sleepDisable",
            "setBusParams",
            "busVoltageCornerMin",
            "busVoltageCornerTarget",
            "busVoltageCornerMax",
            "setCoreParams",
            "coreVoltageCornerMin",
            "coreVoltageCornerTarget",
            "coreVoltageCornerMax",
        )
    ]


class QnnHtpPerfInfrastructure_HmxV2_t(C.Structure):
    _fields_ = [
        ("hmxPickDefault", C.c_uint32),
        ("hmxVoltageCornerMin", C.c_uint32),
        ("hmxVoltageCornerTarget", C.c_uint32),
        ("hmxVoltageCornerMax", C.c_uint32),
        ("hmxPerfMode", Qnn_Enum_t),
    ]


class _PowerConfigUnion(C.Union):
    _fields_ = [
        ("dcvsV3Config", QnnHtpPerfInfrastructure_DcvsV3_t),
        ("rpcControlLatencyConfig", C.c_uint32),
        ("rpcPollingTimeConfig", C.c_uint32),
        ("hmxTimeoutIntervalUsConfig", C.c_uint32),
        ("hmxV2Config", QnnHtpPerfInfrastructure_HmxV2_t),
        ("adaptivePollingTimeConfig", C.c_uint32),
        ("ddrPerfModeConfig", C.c_uint32),
    ]


class QnnHtpPerfInfrastructure_PowerConfig_t(C.Structure):
    """68 B, align 4: the union sits at +4 (confirmed by the 2.51 runtime)."""

    _anonymous_ = ("u",)
    _fields_ = [("option", Qnn_Enum_t), ("u", _PowerConfigUnion)]


CreatePowerConfigIdFn = C.CFUNCTYPE(
    Qnn_ErrorHandle_t, C.c_uint32, C.c_uint32, C.POINTER(C.c_uint32)
)
DestroyPowerConfigIdFn = C.CFUNCTYPE(Qnn_ErrorHandle_t, C.c_uint32)
SetPowerConfigFn = C.CFUNCTYPE(
    Qnn_ErrorHandle_t,
    C.c_uint32,
    C.POINTER(C.POINTER(QnnHtpPerfInfrastructure_PowerConfig_t)),
)


class QnnHtpDevice_PerfInfrastructure_t(C.Structure):
    _fields_ = [
        ("createPowerConfigId", CreatePowerConfigIdFn),
        ("destroyPowerConfigId", DestroyPowerConfigIdFn),
        ("setPowerConfig", SetPowerConfigFn),
        ("setMemoryConfig", C.c_void_p),
    ]


class QnnHtpDevice_Infrastructure_t(C.Structure):
    _fields_ = [
        ("infraType", Qnn_Enum_t),
        ("perfInfra", QnnHtpDevice_PerfInfrastructure_t),
    ]


class QnnProfile_EventData_t(C.Structure):
    _fields_ = [
        ("type", C.c_uint32),
        ("unit", C.c_uint32),
        ("value", C.c_uint64),
        ("identifier", C.c_char_p),
    ]


class Qnn_MemShape_t(C.Structure):
    _fields_ = [
        ("numDim", C.c_uint32),
        ("dimSize", C.POINTER(C.c_uint32)),
        ("shapeConfig", C.c_char_p),
    ]


class _MemDescriptorUnion(C.Union):
    _fields_ = [
        ("ionFd", C.c_int32),  # Qnn_MemIonInfo_t {int32 fd}
        ("customInfo", C.c_void_p),
        ("dmaBufInfo", C.c_int32 * 4),  # {int32 fd; void* data}: fd @0, data @8
    ]


class Qnn_MemDescriptor_t(C.Structure):
    _anonymous_ = ("u",)
    _fields_ = [
        ("memShape", Qnn_MemShape_t),
        ("dataType", Qnn_Enum_t),
        ("memType", Qnn_Enum_t),
        ("u", _MemDescriptorUnion),
    ]


# --------------------------------------------------------------------------- callbacks
#: void cb(const char* fmt, QnnLog_Level_t level, uint64_t timestamp, va_list args)
#: va_list decays to a pointer on x86_64 and is passed by reference on aarch64.
QnnLog_Callback_t = C.CFUNCTYPE(None, C.c_char_p, C.c_uint32, C.c_uint64, C.c_void_p)

# --------------------------------------------------------------------------- tables
_E = Qnn_ErrorHandle_t
_H = Qnn_Handle_t
_PH = C.POINTER(Qnn_Handle_t)
_CFG = C.c_void_p  # const X_Config_t** (NULL-terminated array of pointers)
_BYVALUE = None  # marks a function taking a struct by value: never called from ctypes

#: QNN_INTERFACE_VER_TYPE in header order (API 2.32: 71 entries).  Newer runtimes
#: append entries; index from the start only.
CORE_FUNCTIONS: Final[list[tuple[str, tuple | None]]] = [
    ("propertyHasCapability", (C.c_uint32,)),
    ("backendCreate", (_H, _CFG, _PH)),
    ("backendSetConfig", (_H, _CFG)),
    ("backendGetApiVersion", (C.POINTER(Qnn_ApiVersion_t),)),
    ("backendGetBuildId", (C.POINTER(C.c_char_p),)),
    ("backendRegisterOpPackage", (_H, C.c_char_p, C.c_char_p, C.c_char_p)),
    ("backendGetSupportedOperations", (_H, C.POINTER(C.c_uint32), C.c_void_p)),
    ("backendValidateOpConfig", _BYVALUE),
    ("backendFree", (_H,)),
    ("contextCreate", (_H, _H, _CFG, _PH)),
    ("contextSetConfig", (_H, _CFG)),
    ("contextGetBinarySize", (_H, C.POINTER(C.c_uint64))),
    ("contextGetBinary", (_H, C.c_void_p, C.c_uint64, C.POINTER(C.c_uint64))),
    ("contextCreateFromBinary", (_H, _H, _CFG, C.c_void_p, C.c_uint64, _PH, _H)),
    ("contextFree", (_H, _H)),
    ("graphCreate", (_H, C.c_char_p, _CFG, _PH)),
    ("graphCreateSubgraph", (_H, C.c_char_p, _PH)),
    ("graphSetConfig", (_H, _CFG)),
    ("graphAddNode", _BYVALUE),
    ("graphFinalize", (_H, _H, _H)),
    ("graphRetrieve", (_H, C.c_char_p, _PH)),
    (
        "graphExecute",
        (_H, C.c_void_p, C.c_uint32, C.c_void_p, C.c_uint32, _H, _H),
    ),
    ("graphExecuteAsync", _BYVALUE),  # takes a notify callback; unused
    ("tensorCreateContextTensor", (_H, C.POINTER(Qnn_Tensor_t))),
    ("tensorCreateGraphTensor", (_H, C.POINTER(Qnn_Tensor_t))),
    ("logCreate", (QnnLog_Callback_t, C.c_uint32, _PH)),
    ("logSetLogLevel", (_H, C.c_uint32)),
    ("logFree", (_H,)),
    ("profileCreate", (_H, C.c_uint32, _PH)),
    ("profileSetConfig", (_H, _CFG)),
    (
        "profileGetEvents",
        (_H, C.POINTER(C.POINTER(C.c_uint64)), C.POINTER(C.c_uint32)),
    ),
    (
        "profileGetSubEvents",
        (C.c_uint64, C.POINTER(C.POINTER(C.c_uint64)), C.POINTER(C.c_uint32)),
    ),
    ("profileGetEventData", (C.c_uint64, C.POINTER(QnnProfile_EventData_t))),
    ("profileGetExtendedEventData", (C.c_uint64, C.c_void_p)),
    ("profileFree", (_H,)),
    ("memRegister", (_H, C.POINTER(Qnn_MemDescriptor_t), C.c_uint32, _PH)),
    ("memDeRegister", (_PH, C.c_uint32)),
    ("deviceGetPlatformInfo", (_H, C.POINTER(C.POINTER(QnnDevice_PlatformInfo_t)))),
    ("deviceFreePlatformInfo", (_H, C.POINTER(QnnDevice_PlatformInfo_t))),
    ("deviceGetInfrastructure", (C.POINTER(C.c_void_p),)),
    ("deviceCreate", (_H, _CFG, _PH)),
    ("deviceSetConfig", (_H, _CFG)),
    ("deviceGetInfo", (_H, C.POINTER(C.POINTER(QnnDevice_PlatformInfo_t)))),
    ("deviceFree", (_H,)),
    ("signalCreate", (_H, _CFG, _PH)),
    ("signalSetConfig", (_H, _CFG)),
    ("signalTrigger", (_H,)),
    ("signalFree", (_H,)),
    ("errorGetMessage", (C.c_uint64, C.POINTER(C.c_char_p))),
    ("errorGetVerboseMessage", (C.c_uint64, C.POINTER(C.c_char_p))),
    ("errorFreeVerboseMessage", (C.c_char_p,)),
    ("graphPrepareExecutionEnvironment", (_H, C.c_void_p, C.c_uint32)),
    ("graphReleaseExecutionEnvironment", (_H, C.c_void_p, C.c_uint32)),
    ("graphGetProperty", (_H, C.c_void_p)),
    ("contextValidateBinary", (_H, _H, _CFG, C.c_void_p, C.c_uint64)),
    (
        "contextCreateFromBinaryWithSignal",
        (_H, _H, _CFG, C.c_void_p, C.c_uint64, _PH, _H, _H),
    ),
    ("contextCreateFromBinaryListAsync", (_H, _H, C.c_void_p, _CFG, _H)),
    ("tensorUpdateGraphTensors", (_H, C.c_void_p, C.c_uint64)),
    ("tensorUpdateContextTensors", (_H, C.c_void_p, C.c_uint64)),
    ("contextGetBinarySectionSize", (_H, _H, C.c_uint32, C.POINTER(C.c_uint64))),
    (
        "contextGetBinarySection",
        (_H, _H, C.c_uint32, C.c_void_p, C.POINTER(C.c_uint64), _H, _H),
    ),
    ("contextApplyBinarySection", (_H, _H, C.c_uint32, C.c_void_p, _H, _H)),
    ("backendGetProperty", (_H, C.c_void_p)),
    ("contextGetProperty", (_H, C.POINTER(C.POINTER(QnnContext_Property_t)))),
    (
        "contextGetIncrementalBinary",
        (_H, C.POINTER(C.c_void_p), C.POINTER(C.c_uint64), C.POINTER(C.c_uint64)),
    ),
    ("contextReleaseIncrementalBinary", (_H, C.c_void_p, C.c_uint64)),
    ("contextFinalize", (_H, _H)),
    ("globalConfigSet", (_CFG,)),
    (
        "contextCreateFromBinaryWithCallback",
        (_H, _H, _CFG, C.c_void_p, C.c_void_p, C.c_uint64, _PH, _H, _H),
    ),
    ("contextGetBinarySectionUpdate", _BYVALUE),
    ("contextFreeBinarySectionUpdate", _BYVALUE),
]

#: QNN_SYSTEM_INTERFACE_VER_TYPE in header order (system API 1.7: 16 entries).
SYSTEM_FUNCTIONS: Final[list[tuple[str, tuple | None]]] = [
    ("systemContextCreate", (C.POINTER(QnnSystemContext_Handle_t),)),
    (
        "systemContextGetBinaryInfo",
        (
            QnnSystemContext_Handle_t,
            C.c_void_p,
            C.c_uint64,
            C.POINTER(C.POINTER(QnnSystemContext_BinaryInfo_t)),
            C.POINTER(C.c_uint64),
        ),
    ),
    (
        "systemContextGetMetaData",
        (
            QnnSystemContext_Handle_t,
            C.c_void_p,
            C.c_uint64,
            C.POINTER(C.POINTER(QnnSystemContext_BinaryInfo_t)),
        ),
    ),
    ("systemContextFree", (QnnSystemContext_Handle_t,)),
    ("systemTensorGetMemoryFootprint", _BYVALUE),
    ("systemLogCreate", (QnnLog_Callback_t, C.c_uint32, _PH)),
    ("systemLogSetLogLevel", (_H, C.c_uint32)),
    ("systemLogFree", (_H,)),
    ("systemDlcCreateFromFile", (_H, C.c_char_p, _PH)),
    ("systemDlcCreateFromBinary", (_H, C.c_void_p, C.c_uint64, _PH)),
    ("systemDlcComposeGraphs", _BYVALUE),
    ("systemDlcGetOpMappings", (_H, C.c_void_p, C.POINTER(C.c_uint32))),
    ("systemDlcFree", (_H,)),
    ("systemProfileCreateSerializationTarget", _BYVALUE),
    ("systemProfileSerializeEventData", (_H, C.c_void_p, C.c_uint32)),
    ("systemProfileFreeSerializationTarget", (_H,)),
]


def _table(name: str, functions: list[tuple[str, tuple | None]]) -> type:
    fields = []
    for fname, args in functions:
        ftype = C.c_void_p if args is None else C.CFUNCTYPE(_E, *args)
        fields.append((fname, ftype))
    return type(name, (C.Structure,), {"_fields_": fields})


QNN_INTERFACE_VER_TYPE = _table("QNN_INTERFACE_VER_TYPE", CORE_FUNCTIONS)
QNN_SYSTEM_INTERFACE_VER_TYPE = _table(
    "QNN_SYSTEM_INTERFACE_VER_TYPE", SYSTEM_FUNCTIONS
)


class QnnInterface_t(C.Structure):
    _fields_ = [
        ("backendId", C.c_uint32),
        ("providerName", C.c_char_p),
        ("apiVersion", Qnn_ApiVersion_t),
        ("QNN_INTERFACE_VER_NAME", QNN_INTERFACE_VER_TYPE),
    ]


class QnnSystemInterface_t(C.Structure):
    _fields_ = [
        ("backendId", C.c_uint32),
        ("providerName", C.c_char_p),
        ("systemApiVersion", Qnn_Version_t),
        ("QNN_SYSTEM_INTERFACE_VER_NAME", QNN_SYSTEM_INTERFACE_VER_TYPE),
    ]


#: E getProviders(const Provider*** providerList, uint32_t* numProviders)
GetProvidersFn_argtypes: Final = (
    C.POINTER(C.POINTER(C.c_void_p)),
    C.POINTER(C.c_uint32),
)
QNN_INTERFACE_GET_PROVIDERS: Final = "QnnInterface_getProviders"
QNN_SYSTEM_INTERFACE_GET_PROVIDERS: Final = "QnnSystemInterface_getProviders"
