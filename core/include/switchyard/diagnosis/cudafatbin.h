// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/sdk/errors.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// What one image of a CUDA fat binary is: machine code for one SM (a cubin, an ELF file of
/// its own) or PTX, which the driver compiles for the device when a program loads it.
enum class GpuCodeKind { Ptx, Cubin };

/// How far an image's code carries (CUDA 12.0 and 12.9): a plain sm_XY / compute_XY, an
/// architecture-specific sm_XYa / compute_XYa (only a device of exactly X.Y), or a
/// family-specific sm_XYf / compute_XYf (devices of major X with minor >= Y).
enum class GpuArchVariant { Portable, ArchSpecific, FamilySpecific };

/// One entry of a `.nv_fatbin` container, read from its header only (the payload, often
/// zstd-compressed, is never decompressed).
struct SWITCHYARD_CORE_EXPORT GpuCodeImage {
    GpuCodeKind kind = GpuCodeKind::Cubin;
    int arch = 0; // major x 10 + minor: 80 for sm_80 and compute_80, 100 for sm_100
    GpuArchVariant variant = GpuArchVariant::Portable;
    bool compressed = false;
    std::uint64_t size = 0; // the payload's bytes in the file
    int container = 0;      // which container of the section (one per translation unit)
    /// PTX only: its PTX ISA version, major x 10 + minor (84 for `.version 8.4`), read from
    /// the entry header; 0 for a cubin, or where the header says none.
    int ptx_isa = 0;

    /// "sm_80", "sm_90a" (a cubin); "compute_90", "compute_100f" (PTX).
    std::string name() const;
    /// Whether a device of compute capability `cc` (major x 10 + minor) can run it: a cubin
    /// sm_XY on a device of the same major and minor >= Y (binary compatibility within a
    /// major; sm_XYa only on X.Y); PTX compute_XY, JIT-compiled by the driver, on any
    /// device with cc >= XY (compute_XYa only on X.Y, compute_XYf within major X).
    bool runs_on(int cc) const noexcept;

    friend bool operator==(const GpuCodeImage&, const GpuCodeImage&) = default;
};

/// The GPU code a library carries: its `.nv_fatbin` section, read with libelf without
/// loading the library (no CUDA tool or driver needed).
struct SWITCHYARD_CORE_EXPORT CudaGpuCode {
    std::string library;
    bool readable = false;   // false: `error` says why (not a file, not ELF)
    std::string error;       // also set, with `readable` true, when the section is malformed
                             // (the images before the damage are kept)
    bool has_fatbin = false; // the library has a `.nv_fatbin` section
    int containers = 0;      // fatbin containers found in the section
    std::vector<GpuCodeImage> images; // every entry of every container, in file order

    /// Each distinct (kind, arch, variant) once: cubins first, then PTX, each by arch.
    std::vector<GpuCodeImage> distinct() const;
    /// "sm_80 and sm_90 cubins and compute_90 PTX", "sm_75 cubin and no PTX",
    /// "compute_90 PTX and no cubin"; "no GPU code" when there are no images.
    std::string summary() const;
};

/// The images of a `.nv_fatbin` section's bytes: one container after another (16-byte
/// header, magic 0xBA55ED50, then entries of {kind, header size, padded payload size,
/// SM, flags}), containers 8-byte aligned. Stops at the first malformed header, with
/// `error` saying where; what was read before is returned.
SWITCHYARD_CORE_EXPORT std::vector<GpuCodeImage>
parse_cuda_fatbin(std::span<const unsigned char> section, std::string* error = nullptr,
                  int* containers = nullptr);

/// Reads `path`'s `.nv_fatbin` section. A library without one (every non-CUDA plugin, and
/// CUDA code that only calls libraries such as cuBLAS) gives `has_fatbin` false and no
/// images: whether that matters is the caller's call.
SWITCHYARD_CORE_EXPORT CudaGpuCode read_cuda_gpu_code(const std::string& path);

/// A CUDA device as the judgements need it.
struct SWITCHYARD_CORE_EXPORT CudaDeviceArch {
    std::string device;         // "cuda:0"
    int compute_capability = 0; // major x 10 + minor: 75 for sm_75
    /// The CUDA version its driver supports (cudaDriverGetVersion: major x 1000 + minor x 10);
    /// 0: unknown, and driver_too_old() does not judge the device.
    int driver_version = 0;
};

/// One device the library's GPU code does not reach.
struct SWITCHYARD_CORE_EXPORT GpuCodeMismatch {
    std::string device;
    int compute_capability = 0;
    bool partial = false; // some containers (translation units) run there, others do not
    /// "carries sm_80 and sm_90 cubins and compute_90 PTX; cuda:0 is sm_75: no kernel can
    /// run there" (the `{missing}` of the cause table's `gpu_code_missing` row).
    std::string message;
};

/// The image the driver would use on a device of `cc`: the newest cubin that runs there,
/// else the newest PTX it can JIT-compile; nullopt when none. `container` >= 0 looks only
/// at that container's images (the driver chooses per container), -1 at all of them.
SWITCHYARD_CORE_EXPORT std::optional<GpuCodeImage> image_for_device(const CudaGpuCode& code, int cc,
                                                                    int container = -1);

/// The devices on which the library's kernels cannot run: one entry per device for which
/// some container has no image that `runs_on` it. Empty when every device is covered, and
/// also when the library carries no GPU code at all (`images` empty): a library without a
/// fatbin is no problem by itself, the caller decides.
SWITCHYARD_CORE_EXPORT std::vector<GpuCodeMismatch>
gpu_code_missing(const CudaGpuCode& code, std::span<const CudaDeviceArch> devices);

/// The CUDA release that introduced PTX ISA `ptx_isa` (major x 10 + minor), in the driver's
/// encoding (major x 1000 + minor x 10: 12040 for CUDA 12.4); 0 for an ISA this table does not
/// know. A driver JIT-compiles PTX up to the ISA of its own CUDA version, no newer.
SWITCHYARD_CORE_EXPORT int cuda_version_for_ptx_isa(int ptx_isa) noexcept;

/// "12.4" for 12040.
SWITCHYARD_CORE_EXPORT std::string cuda_version_text(int version);
/// 12040 for "12.4" (a device's `driver_version` property), 0 for text that is not one.
SWITCHYARD_CORE_EXPORT int parse_cuda_version(const std::string& text) noexcept;

/// One device whose driver is older than what the library needs there.
struct SWITCHYARD_CORE_EXPORT DriverTooOld {
    std::string device;
    int needed = 0; // CUDA version, the driver's encoding
    int driver = 0;
    /// "CUDA 12.4 on cuda:0 (its compute_90 PTX is PTX ISA 8.4, which the driver must
    /// compile there); the driver supports CUDA 12.2" (the `{missing}` of `driver_too_old`).
    std::string message;
};

/// What the library needs of each device's driver, against what the driver supports:
///   - its CUDA runtime, from a `libcudart.so.N` among `needed_sonames` (the library's
///     resolved closure): CUDA N.0 at least (a runtime runs on any driver of its major since
///     CUDA 11's minor-version compatibility);
///   - where the image the driver would use on the device (image_for_device) is PTX: the
///     CUDA release of its PTX ISA (an older driver refuses it: "the provided PTX was
///     compiled with an unsupported toolchain").
/// A device whose driver version is unknown (0) is not judged.
SWITCHYARD_CORE_EXPORT std::vector<DriverTooOld>
driver_too_old(const CudaGpuCode& code, const std::vector<std::string>& needed_sonames,
               std::span<const CudaDeviceArch> devices);

/// The cause a CUDA runtime or driver error message names (a plugin's register hook, or a
/// kernel launch, that reports it): "CUDA driver version is insufficient for CUDA runtime
/// version" (cudaErrorInsufficientDriver) and "the provided PTX was compiled with an
/// unsupported toolchain" (cudaErrorUnsupportedPtxVersion) -> driver_too_old; "no kernel
/// image is available for execution on the device" (cudaErrorNoKernelImageForDevice) ->
/// gpu_code_missing; nullopt otherwise.
SWITCHYARD_CORE_EXPORT std::optional<BackendCause> classify_cuda_error(std::string_view message);

} // namespace switchyard
