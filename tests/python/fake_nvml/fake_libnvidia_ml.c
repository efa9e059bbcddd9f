/* A stand-in libnvidia-ml.so.1 for the NVML tests that need no GPU
 * (tests/python/conftest.py's fake_nvml_dir builds it with the system C
 * compiler against nvml.h, NVML_NO_UNVERSIONED_FUNC_DEFS defined).
 *
 * Two devices, answering a handful of queries as the real library does:
 * NVML_ERROR_UNINITIALIZED before nvmlInit_v2 (and after as many
 * nvmlShutdown calls), NVML_ERROR_INVALID_ARGUMENT for a NULL output or a
 * handle it did not give out, NVML_ERROR_INSUFFICIENT_SIZE (with the size
 * needed) for a buffer or an array too small, and
 * NVML_ERROR_ARGUMENT_VERSION_MISMATCH for a versioned struct whose version
 * field is not the one nvml.h defines. The exported fake_nvml_* variables hold
 * what the last call of some entry points was given, for the tests to check. Every other entry point is absent, as
 * in a library older than the header.
 *
 * FAKE_NVML_DEVICES in the environment sets the device count (0 to 2).
 */
#define NVML_NO_UNVERSIONED_FUNC_DEFS
#include <nvml.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nvmlDevice_st {
    unsigned int index;
    const char* name;
    const char* uuid;
    const char* bus_id;
    unsigned int pci_device_id;
    unsigned long long total;
    unsigned long long used;
    int major, minor;
};

static struct nvmlDevice_st devices[2] = {
    {0, "NVIDIA Stand-in GPU A", "GPU-00000000-1111-2222-3333-444444444444", "00000000:1A:00.0", 0x233010DE,
     80ull << 30, 1ull << 30, 9, 0},
    {1, "NVIDIA Stand-in GPU B", "GPU-55555555-6666-7777-8888-999999999999", "00000000:2B:00.0", 0x233010DE,
     80ull << 30, 2ull << 30, 9, 0},
};

/* How many nvmlInit_v2 calls no nvmlShutdown has matched yet. */
int fake_nvml_init_count;
/* The last flags nvmlInitWithFlags received. */
unsigned int fake_nvml_init_flags;

static unsigned int device_count(void) {
    const char* v = getenv("FAKE_NVML_DEVICES");
    if (v == NULL) return 2;
    int n = atoi(v);
    return n < 0 ? 0 : n > 2 ? 2 : (unsigned int)n;
}

static int valid(nvmlDevice_t d) {
    for (unsigned int i = 0; i < device_count(); ++i) {
        if (d == &devices[i]) return 1;
    }
    return 0;
}

#define NEEDS_INIT() \
    do { if (fake_nvml_init_count == 0) return NVML_ERROR_UNINITIALIZED; } while (0)
#define NEEDS_DEVICE(d) \
    do { NEEDS_INIT(); if (!valid(d)) return NVML_ERROR_INVALID_ARGUMENT; } while (0)

static nvmlReturn_t copy_string(char* out, unsigned int length, const char* text) {
    if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(text) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, text, strlen(text) + 1);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInit_v2(void) {
    ++fake_nvml_init_count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
    fake_nvml_init_flags = flags;
    ++fake_nvml_init_count;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
    NEEDS_INIT();
    --fake_nvml_init_count;
    return NVML_SUCCESS;
}

const char* nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
        case NVML_ERROR_NOT_FOUND: return "Not Found";
        case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
        default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned int length) {
    NEEDS_INIT();
    return copy_string(version, length, "999.99.99");
}

nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned int length) {
    NEEDS_INIT();
    return copy_string(version, length, "13.999.99");
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
    if (version == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *version = 13050;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
    NEEDS_INIT();
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *count = device_count();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
    NEEDS_INIT();
    if (device == NULL || index >= device_count()) return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devices[index];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
    NEEDS_INIT();
    if (uuid == NULL || device == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < device_count(); ++i) {
        if (strcmp(devices[i].uuid, uuid) == 0) {
            *device = &devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, nvmlDevice_t* device) {
    NEEDS_INIT();
    if (bus_id == NULL || device == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < device_count(); ++i) {
        if (strcmp(devices[i].bus_id, bus_id) == 0) {
            *device = &devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int* index) {
    NEEDS_DEVICE(device);
    if (index == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *index = device->index;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned int length) {
    NEEDS_DEVICE(device);
    return copy_string(name, length, device->name);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned int length) {
    NEEDS_DEVICE(device);
    return copy_string(uuid, length, device->uuid);
}

nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned int length) {
    NEEDS_DEVICE(device);
    (void)serial;
    (void)length;
    return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
    NEEDS_DEVICE(device);
    if (memory == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    memory->total = device->total;
    memory->reserved = 512ull << 20;
    memory->used = device->used;
    memory->free = device->total - device->used - memory->reserved;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
    NEEDS_DEVICE(device);
    if (pci == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    memset(pci, 0, sizeof(*pci));
    snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%s", device->bus_id + 4);
    snprintf(pci->busId, sizeof(pci->busId), "%s", device->bus_id);
    pci->domain = 0;
    pci->bus = device->index == 0 ? 0x1A : 0x2B;
    pci->device = 0;
    pci->pciDeviceId = device->pci_device_id;
    pci->pciSubSystemId = 0x16F110DE;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major, int* minor) {
    NEEDS_DEVICE(device);
    if (major == NULL || minor == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *major = device->major;
    *minor = device->minor;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuP2PCapsIndex_t index,
                                    nvmlGpuP2PStatus_t* status) {
    NEEDS_DEVICE(device1);
    if (!valid(device2) || status == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    /* Reads and writes between the two stand-in devices; nothing else. */
    if (device1 == device2) {
        *status = NVML_P2P_STATUS_NOT_SUPPORTED;
    } else if (index == NVML_P2P_CAPS_INDEX_READ || index == NVML_P2P_CAPS_INDEX_WRITE) {
        *status = NVML_P2P_STATUS_OK;
    } else {
        *status = NVML_P2P_STATUS_NOT_SUPPORTED;
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t device1, nvmlDevice_t device2,
                                                 nvmlGpuTopologyLevel_t* path) {
    NEEDS_DEVICE(device1);
    if (!valid(device2) || path == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *path = device1 == device2 ? NVML_TOPOLOGY_INTERNAL : NVML_TOPOLOGY_HOSTBRIDGE;
    return NVML_SUCCESS;
}

/* As nvml.h says: asked with a count of 0, it sets the count of GPUs at that
   level and succeeds (no INSUFFICIENT_SIZE); asked with a count, it fills the
   array. The other stand-in device is nearest from the host bridge up. */
nvmlReturn_t nvmlDeviceGetTopologyNearestGpus(nvmlDevice_t device, nvmlGpuTopologyLevel_t level, unsigned int* count,
                                              nvmlDevice_t* device_array) {
    NEEDS_DEVICE(device);
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned int n = device_count() == 2 && level >= NVML_TOPOLOGY_HOSTBRIDGE ? 1 : 0;
    if (*count == 0) {
        *count = n;
        return NVML_SUCCESS;
    }
    if (device_array == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (n == 1) device_array[0] = device == &devices[0] ? &devices[1] : &devices[0];
    *count = n;
    return NVML_SUCCESS;
}

/* Three scalars, each its own value: 2 sessions, 60 FPS, 1500 us on device 0. */
nvmlReturn_t nvmlDeviceGetEncoderStats(nvmlDevice_t device, unsigned int* session_count, unsigned int* average_fps,
                                       unsigned int* average_latency) {
    NEEDS_DEVICE(device);
    if (session_count == NULL || average_fps == NULL || average_latency == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *session_count = device->index == 0 ? 2 : 0;
    *average_fps = device->index == 0 ? 60 : 0;
    *average_latency = device->index == 0 ? 1500 : 0;
    return NVML_SUCCESS;
}

/* MIG, as nvml.h describes it: a profile's possible placements are asked
   with no array for their count (answered with success), then with an array
   that large; the instances of a profile have no such query, the caller's
   array must hold all of them (two GPU instances of the profile's two
   placements, two compute instances of three placements). */
nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(nvmlDevice_t device, unsigned int profile_id,
                                                           nvmlGpuInstancePlacement_t* placements, unsigned int* count) {
    NEEDS_DEVICE(device);
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *count = 2;
    if (placements != NULL) {
        for (unsigned int i = 0; i < 2; ++i) {
            placements[i].start = 4 * i + profile_id;
            placements[i].size = 4;
        }
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t device, unsigned int profile_id, nvmlGpuInstance_t* instances,
                                       unsigned int* count) {
    NEEDS_DEVICE(device);
    (void)profile_id;
    if (instances == NULL || count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < 2; ++i) instances[i] = (nvmlGpuInstance_t)(uintptr_t)(0x1000 + 0x10 * i);
    *count = 2;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstancePossiblePlacements(nvmlGpuInstance_t instance, unsigned int profile_id,
                                                                 nvmlComputeInstancePlacement_t* placements,
                                                                 unsigned int* count) {
    NEEDS_INIT();
    (void)instance;
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *count = 3;
    if (placements != NULL) {
        for (unsigned int i = 0; i < 3; ++i) {
            placements[i].start = i;
            placements[i].size = 1 + profile_id;
        }
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvmlGpuInstance_t instance, unsigned int profile_id,
                                                nvmlComputeInstance_t* instances, unsigned int* count) {
    NEEDS_INIT();
    (void)instance;
    (void)profile_id;
    if (instances == NULL || count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < 2; ++i) instances[i] = (nvmlComputeInstance_t)(uintptr_t)(0x2000 + 0x10 * i);
    *count = 2;
    return NVML_SUCCESS;
}

/* Two samples on device 0, newer than the time stamp asked for; the count is
   in and out, INSUFFICIENT_SIZE while the array is too small. */
nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
                                             unsigned int* count, unsigned long long last_seen) {
    NEEDS_DEVICE(device);
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned int n = device->index == 0 ? 2 : 0;
    if (utilization == NULL || *count < n) {
        *count = n;
        return n == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < n; ++i) {
        memset(&utilization[i], 0, sizeof(utilization[i]));
        utilization[i].pid = 2000 + i;
        utilization[i].timeStamp = last_seen + 1 + i;
        utilization[i].smUtil = 10 * (i + 1);
    }
    *count = n;
    return NVML_SUCCESS;
}

/* vGPU metadata: the buffer's size goes in and comes back; a buffer smaller
   than the struct is INSUFFICIENT_SIZE, with the size needed. */
nvmlReturn_t nvmlDeviceGetVgpuMetadata(nvmlDevice_t device, nvmlVgpuPgpuMetadata_t* metadata, unsigned int* size) {
    NEEDS_DEVICE(device);
    if (size == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (metadata == NULL || *size < sizeof(*metadata)) {
        *size = sizeof(*metadata);
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memset(metadata, 0, sizeof(*metadata));
    metadata->version = 1;
    metadata->revision = 2 + device->index;
    strcpy(metadata->hostDriverVersion, "580.95.05");
    metadata->opaqueDataSize = 4;
    *size = sizeof(*metadata);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlVgpuInstanceGetMetadata(nvmlVgpuInstance_t instance, nvmlVgpuMetadata_t* metadata, unsigned int* size) {
    NEEDS_INIT();
    if (size == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (metadata == NULL || *size < sizeof(*metadata)) {
        *size = sizeof(*metadata);
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memset(metadata, 0, sizeof(*metadata));
    metadata->version = 1;
    metadata->guestVgpuVersion = instance;
    strcpy(metadata->guestDriverVersion, "580.95.05");
    *size = sizeof(*metadata);
    return NVML_SUCCESS;
}

/* Three processes on device 0, none on device 1: the count is in and out. */
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int* count,
                                                     nvmlProcessInfo_t* infos) {
    NEEDS_DEVICE(device);
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned int n = device->index == 0 ? 3 : 0;
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (n > 0 && infos == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < n; ++i) {
        infos[i].pid = 1000 + i;
        infos[i].usedGpuMemory = (unsigned long long)(i + 1) << 20;
        infos[i].gpuInstanceId = 0xFFFFFFFF;
        infos[i].computeInstanceId = 0xFFFFFFFF;
    }
    *count = n;
    return NVML_SUCCESS;
}

/* Two memory clocks: the count is in and out. */
nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t device, unsigned int* count, unsigned int* clocks) {
    NEEDS_DEVICE(device);
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (*count < 2) {
        *count = 2;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (clocks == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    clocks[0] = 2619;
    clocks[1] = 1593;
    *count = 2;
    return NVML_SUCCESS;
}

/* Device 0 is nearest CPUs 0-3 and 64: one bit each. */
nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned int cpu_set_size, unsigned long* cpu_set) {
    NEEDS_DEVICE(device);
    if (cpu_set == NULL || cpu_set_size == 0) return NVML_ERROR_INVALID_ARGUMENT;
    memset(cpu_set, 0, cpu_set_size * sizeof(unsigned long));
    if (device->index == 0) {
        cpu_set[0] = 0xF;
        if (cpu_set_size > 1) cpu_set[1] = 1;
    }
    return NVML_SUCCESS;
}

/* vGPU type 7 is named "GRID Stand-in-4C"; the size is in and out. */
nvmlReturn_t nvmlVgpuTypeGetName(nvmlVgpuTypeId_t type, char* name, unsigned int* size) {
    NEEDS_INIT();
    static const char text[] = "GRID Stand-in-4C";
    if (size == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (type != 7) return NVML_ERROR_INVALID_ARGUMENT;
    if (*size < sizeof(text)) {
        *size = sizeof(text);
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (name == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    memcpy(name, text, sizeof(text));
    *size = sizeof(text);
    return NVML_SUCCESS;
}

/* The version a versioned struct must carry: what nvml.h's macro says. */
#define NEEDS_VERSION(p, v) \
    do { if ((p) == NULL) return NVML_ERROR_INVALID_ARGUMENT; \
         if ((p)->version != (v)) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH; } while (0)

/* The last length, count or value an entry point below was given, for the tests to read. */
unsigned int fake_nvml_last_length;
int fake_nvml_last_int;
unsigned long long fake_nvml_last_mask;
unsigned int fake_nvml_cleared[8];

nvmlReturn_t nvmlDeviceGetPciInfoExt(nvmlDevice_t device, nvmlPciInfoExt_t* pci) {
    NEEDS_DEVICE(device);
    NEEDS_VERSION(pci, nvmlPciInfoExt_v1);
    snprintf(pci->busId, sizeof(pci->busId), "%s", device->bus_id);
    pci->domain = 0;
    pci->bus = device->index == 0 ? 0x1A : 0x2B;
    pci->device = 0;
    pci->pciDeviceId = device->pci_device_id;
    pci->pciSubSystemId = 0x16F110DE;
    pci->baseClass = 3;
    pci->subClass = 2;
    return NVML_SUCCESS;
}

/* The branch of a driver whose branch string fills a buffer of `length` bytes. */
nvmlReturn_t nvmlSystemGetDriverBranch(nvmlSystemDriverBranchInfo_t* info, unsigned int length) {
    NEEDS_INIT();
    NEEDS_VERSION(info, nvmlSystemDriverBranchInfo_v1);
    fake_nvml_last_length = length;
    return copy_string(info->branch, length < sizeof(info->branch) ? length : sizeof(info->branch), "r999_00");
}

/* The GPU sensor only: 41 degrees on device 0, 42 on device 1. */
nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t* temperature) {
    NEEDS_DEVICE(device);
    NEEDS_VERSION(temperature, nvmlTemperature_v1);
    if (temperature->sensorType != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    temperature->temperature = 41 + (int)device->index;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetTemperatureThreshold(nvmlDevice_t device, nvmlTemperatureThresholds_t type, int* temp) {
    NEEDS_DEVICE(device);
    if (temp == NULL || type >= NVML_TEMPERATURE_THRESHOLD_COUNT) return NVML_ERROR_INVALID_ARGUMENT;
    fake_nvml_last_int = *temp;
    return NVML_SUCCESS;
}

/* One fan each, at 1200 RPM. */
nvmlReturn_t nvmlDeviceGetNumFans(nvmlDevice_t device, unsigned int* count) {
    NEEDS_DEVICE(device);
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *count = 1;
    return NVML_SUCCESS;
}


nvmlReturn_t nvmlDeviceGetFanSpeedRPM(nvmlDevice_t device, nvmlFanSpeedInfo_t* info) {
    NEEDS_DEVICE(device);
    NEEDS_VERSION(info, nvmlFanSpeedInfo_v1);
    if (info->fan != 0) return NVML_ERROR_INVALID_ARGUMENT;
    info->speed = 1200;
    return NVML_SUCCESS;
}

/* Offsets of -100..250 MHz, now 5 times the P-state's number, for any clock type but the count. */
nvmlReturn_t nvmlDeviceGetClockOffsets(nvmlDevice_t device, nvmlClockOffset_t* info) {
    NEEDS_DEVICE(device);
    NEEDS_VERSION(info, nvmlClockOffset_v1);
    if (info->type >= NVML_CLOCK_COUNT || info->pstate > NVML_PSTATE_15) return NVML_ERROR_INVALID_ARGUMENT;
    info->clockOffsetMHz = 5 * (int)info->pstate;
    info->minClockOffsetMHz = -100;
    info->maxClockOffsetMHz = 250;
    return NVML_SUCCESS;
}

/* P0, P2 and P8, then NVML_PSTATE_UNKNOWN to the end of the caller's `size` bytes. */
nvmlReturn_t nvmlDeviceGetSupportedPerformanceStates(nvmlDevice_t device, nvmlPstates_t* pstates, unsigned int size) {
    NEEDS_DEVICE(device);
    if (pstates == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    fake_nvml_last_length = size;
    const unsigned int n = size / sizeof(nvmlPstates_t);
    if (n < 3) return NVML_ERROR_INSUFFICIENT_SIZE;
    pstates[0] = NVML_PSTATE_0;
    pstates[1] = NVML_PSTATE_2;
    pstates[2] = NVML_PSTATE_8;
    for (unsigned int i = 3; i < n; ++i) pstates[i] = NVML_PSTATE_UNKNOWN;
    return NVML_SUCCESS;
}

/* NVML_FI_DEV_NVLINK_LINK_COUNT is 4 (an unsigned int), NVML_FI_DEV_ECC_CURRENT 1.5 (a double, to show
 * the type travels); any other field reports NVML_ERROR_NOT_SUPPORTED in its own nvmlReturn. */
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
    NEEDS_DEVICE(device);
    if (count < 0 || (count > 0 && values == NULL)) return NVML_ERROR_INVALID_ARGUMENT;
    fake_nvml_last_length = (unsigned int)count;
    for (int i = 0; i < count; ++i) {
        values[i].timestamp = 1700000000000000ll + i;
        values[i].latencyUsec = 7;
        if (values[i].fieldId == NVML_FI_DEV_NVLINK_LINK_COUNT) {
            values[i].valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
            values[i].value.uiVal = 4 + values[i].scopeId;
            values[i].nvmlReturn = NVML_SUCCESS;
        } else if (values[i].fieldId == NVML_FI_DEV_ECC_CURRENT) {
            values[i].valueType = NVML_VALUE_TYPE_DOUBLE;
            values[i].value.dVal = 1.5;
            values[i].nvmlReturn = NVML_SUCCESS;
        } else {
            values[i].nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        }
    }
    return NVML_SUCCESS;
}

/* Records the first 8 field ids it clears. */
nvmlReturn_t nvmlDeviceClearFieldValues(nvmlDevice_t device, int count, nvmlFieldValue_t* values) {
    NEEDS_DEVICE(device);
    if (count < 0 || (count > 0 && values == NULL)) return NVML_ERROR_INVALID_ARGUMENT;
    fake_nvml_last_length = (unsigned int)count;
    for (int i = 0; i < count && i < 8; ++i) fake_nvml_cleared[i] = values[i].fieldId;
    for (int i = 0; i < count; ++i) values[i].nvmlReturn = NVML_SUCCESS;
    return NVML_SUCCESS;
}

/* System events: one set; a wait reports one driver-bind event of GPU 0x1A00. */
static struct nvmlSystemEventSet_st { int unused; } system_event_set;

nvmlReturn_t nvmlSystemEventSetCreate(nvmlSystemEventSetCreateRequest_t* request) {
    NEEDS_INIT();
    NEEDS_VERSION(request, nvmlSystemEventSetCreateRequest_v1);
    request->set = &system_event_set;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemRegisterEvents(nvmlSystemRegisterEventRequest_t* request) {
    NEEDS_INIT();
    NEEDS_VERSION(request, nvmlSystemRegisterEventRequest_v1);
    if (request->set != &system_event_set) return NVML_ERROR_INVALID_ARGUMENT;
    fake_nvml_last_mask = request->eventTypes;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemEventSetWait(nvmlSystemEventSetWaitRequest_t* request) {
    NEEDS_INIT();
    NEEDS_VERSION(request, nvmlSystemEventSetWaitRequest_v1);
    if (request->set != &system_event_set) return NVML_ERROR_INVALID_ARGUMENT;
    fake_nvml_last_length = request->dataSize;
    fake_nvml_last_int = (int)request->timeoutms;
    if (request->dataSize == 0 || request->data == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    request->data[0].eventType = nvmlSystemEventTypeGpuDriverBind;
    request->data[0].gpuId = 0x1A00;
    request->numEvent = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemEventSetFree(nvmlSystemEventSetFreeRequest_t* request) {
    NEEDS_INIT();
    NEEDS_VERSION(request, nvmlSystemEventSetFreeRequest_v1);
    if (request->set != &system_event_set) return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit_v2(nvmlDevice_t device, nvmlPowerValue_v2_t* value) {
    NEEDS_DEVICE(device);
    NEEDS_VERSION(value, nvmlPowerValue_v2);
    fake_nvml_last_int = (int)value->powerScope;
    fake_nvml_last_length = value->powerValueMw;
    return NVML_SUCCESS;
}

/* Two compute processes on device 0, none of another mode or on device 1: the array's
 * length is in and out, as nvmlDeviceGetRunningProcessDetailList documents. */
nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device, nvmlProcessDetailList_t* plist) {
    NEEDS_DEVICE(device);
    NEEDS_VERSION(plist, nvmlProcessDetailList_v1);
    if (plist->mode > NVML_PROCESS_MODE_MPS) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned int n = device->index == 0 && plist->mode == NVML_PROCESS_MODE_COMPUTE ? 2 : 0;
    if (plist->numProcArrayEntries < n) {
        plist->numProcArrayEntries = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (n > 0 && plist->procArray == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < n; ++i) {
        plist->procArray[i].pid = 2000 + i;
        plist->procArray[i].usedGpuMemory = (unsigned long long)(i + 1) << 21;
        plist->procArray[i].gpuInstanceId = 0xFFFFFFFF;
        plist->procArray[i].computeInstanceId = 0xFFFFFFFF;
        plist->procArray[i].usedGpuCcProtectedMemory = 0;
    }
    plist->numProcArrayEntries = n;
    return NVML_SUCCESS;
}

/* vGPU type 5 has three creatable placements on device 0 (ids 0, 2, 4, each of
 * two slots), none elsewhere; count is in and out, as nvml.h documents. */
nvmlReturn_t nvmlDeviceGetVgpuTypeCreatablePlacements(nvmlDevice_t device, nvmlVgpuTypeId_t type,
                                                       nvmlVgpuPlacementList_t* list) {
    NEEDS_DEVICE(device);
    NEEDS_VERSION(list, nvmlVgpuPlacementList_v2);
    if (list->mode > NVML_VGPU_PGPU_HOMOGENEOUS_MODE) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned int n = device->index == 0 && type == 5 ? 3 : 0;
    if (list->count < n) {
        list->count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (n > 0 && list->placementIds == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < n; ++i) list->placementIds[i] = 2 * i + list->mode;
    list->count = n;
    list->placementSize = 2;
    return NVML_SUCCESS;
}

/* No length parameter: nvml.h sizes the buffer NVML_GSP_FIRMWARE_VERSION_BUF_SIZE,
 * and the stand-in fills all of it (its last byte the NUL). */
nvmlReturn_t nvmlDeviceGetGspFirmwareVersion(nvmlDevice_t device, char* version) {
    NEEDS_DEVICE(device);
    if (version == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    memset(version, device->index == 0 ? 'a' : 'b', NVML_GSP_FIRMWARE_VERSION_BUF_SIZE - 1);
    version[NVML_GSP_FIRMWARE_VERSION_BUF_SIZE - 1] = '\0';
    return NVML_SUCCESS;
}

/* The raw payload of a context record: record 0 holds 13 bytes, record 1 none.
 * Asked with no buffer (or too small a one) it reports the size needed. */
unsigned int fake_nvml_context_calls;

nvmlReturn_t nvmlEventSetGetContextData_v1(nvmlEventSet_t set, nvmlEventSetGetContextData_v1_t* params) {
    static const char payload[] = "ctx\0payload-0";
    NEEDS_INIT();
    ++fake_nvml_context_calls;
    if (set == NULL || params == NULL || params->index > 1) return NVML_ERROR_INVALID_ARGUMENT;
    const unsigned int size = params->index == 0 ? (unsigned int)(sizeof(payload) - 1) : 0;
    if (size > 0 && (params->data == NULL || params->dataSize < size)) {
        params->dataSize = size;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    if (size > 0) memcpy(params->data, payload, size);
    params->dataSize = size;
    return NVML_SUCCESS;
}

/* A device by its UUID in either form: ASCII (its "GPU-..." string) or binary
 * (the stand-in's 16 bytes: each 0x10 times one more than the index). */
nvmlReturn_t nvmlDeviceGetHandleByUUIDV(const nvmlUUID_t* uuid, nvmlDevice_t* device) {
    NEEDS_INIT();
    NEEDS_VERSION(uuid, nvmlUUID_v1);
    if (device == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < device_count(); ++i) {
        int match = 0;
        if (uuid->type == NVML_UUID_TYPE_ASCII) {
            match = strncmp(uuid->value.str, devices[i].uuid, sizeof(uuid->value.str)) == 0;
        } else if (uuid->type == NVML_UUID_TYPE_BINARY) {
            match = 1;
            for (unsigned int b = 0; b < NVML_DEVICE_UUID_BINARY_LEN; ++b) match &= uuid->value.bytes[b] == 0x10 * (i + 1);
        } else {
            return NVML_ERROR_INVALID_ARGUMENT;
        }
        if (match) {
            *device = &devices[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* A PRM register access: the stand-in answers a TLV by reversing its dataSize
 * input bytes into outData, sets status to 0x40 plus that size, and leaves
 * dataSize as it was. More than NVML_PRM_DATA_MAX_SIZE bytes is refused. */
nvmlReturn_t nvmlDeviceReadWritePRM_v1(nvmlDevice_t device, nvmlPRMTLV_v1_t* buffer) {
    NEEDS_DEVICE(device);
    if (buffer == NULL || buffer->dataSize > NVML_PRM_DATA_MAX_SIZE) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned char in[NVML_PRM_DATA_MAX_SIZE];
    const unsigned int n = buffer->dataSize;
    memcpy(in, buffer->inData, n);
    for (unsigned int i = 0; i < n; ++i) buffer->outData[i] = in[n - 1 - i];
    buffer->status = 0x40 + n;
    return NVML_SUCCESS;
}

/* PRM counters: each counter's value is its id times 10 plus its local port,
 * an unsigned long long; counter id 0 (the sentinel) gets NOT_SUPPORTED. */
nvmlReturn_t nvmlDeviceReadPRMCounters_v1(nvmlDevice_t device, nvmlPRMCounterList_v1_t* counterList) {
    NEEDS_DEVICE(device);
    if (counterList == NULL || (counterList->numCounters > 0 && counterList->counters == NULL))
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < counterList->numCounters; ++i) {
        nvmlPRMCounter_v1_t* c = &counterList->counters[i];
        if (c->counterId == NVML_PRM_COUNTER_ID_NONE) {
            c->counterValue.status = NVML_ERROR_NOT_SUPPORTED;
            continue;
        }
        c->counterValue.status = NVML_SUCCESS;
        c->counterValue.outputType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
        c->counterValue.outputValue.ullVal = 10ull * c->counterId + c->inData.localPort;
    }
    return NVML_SUCCESS;
}
