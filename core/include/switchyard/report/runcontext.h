// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/hardware/hardware.h>
#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/driftcontrol.h>
#include <switchyard/profiling/profiler.h>
#include <switchyard/profiling/profilesettings.h>
#include <switchyard/sdk/device.h>

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace switchyard {

/// The build that measured a run (context.switchyard).
struct SWITCHYARD_CORE_EXPORT RunBuild {
    std::string version, git_hash, build_type, compiler;
    /// This process's core.
    static RunBuild current();
};

/// A machine's fingerprint (context.fingerprint; profiling/fingerprint.h writes it).
struct SWITCHYARD_CORE_EXPORT RunFingerprint {
    std::string machine_id; // "" before format 4
    /// The parts the id hashes and the software beside them, kept as the JSON they were
    /// hashed from: the hash is over that canonical text.
    nlohmann::json machine = nlohmann::json::object();
    nlohmann::json software = nlohmann::json::object();
    /// The machine part, typed (profiling/fingerprint.h's fields; what a reader shows of a
    /// machine). Empty fields where the fingerprint has none.
    struct Gpu {
        std::string id, name, arch, driver;
    };
    struct Machine {
        std::string cpu_brand, microcode;
        int logical_cpus = 0, physical_cores = 0;
        double memory_gib = 0;
        std::string isa_best, isa_detected, isa_cap;
        std::vector<Gpu> gpus;
        bool has_gpus = false; // the fingerprint lists its GPUs (possibly none)
        std::string openblas_core;
        int openblas_threads = 0;
        bool has_openblas = false;
        std::string os; // the software part's kernel
    };
    Machine facts() const;
};

/// Where a run's CPU ceilings came from when it reused another report's (--ceilings-from).
struct SWITCHYARD_CORE_EXPORT CeilingsProvenance {
    std::string report; // the report's path as given
    std::string date;   // that report's context.date
};

/// Everything a run was measured in, typed: what `Report::context` holds, built by
/// run_context() and completed by the worker controller, read by compare, check, the fleet table,
/// the CLI and the GUI. One encoder (to_json) and one decoder (from_json) for the JSON form
/// of docs/json.md ("context"); no reader outside report/ picks that JSON apart by key.
///
/// The decoder is lenient: a report is judged by its rows, and its context must never make a
/// comparison fail. A part it cannot read is left at its default and said in `read_warnings`
/// (never written back). Keys it does not know (a newer writer's) are kept in `extra` and
/// written back as they were.
struct SWITCHYARD_CORE_EXPORT RunContext {
    RunBuild switchyard;
    std::string date; // UTC ISO 8601
    HostInfo host;
    CpuInfo cpu;
    std::optional<CpuPeaks> cpu_peaks; // measured (or reused) CPU ceilings
    RunClock clock;
    OpenBlasInfo openblas;
    std::vector<DeviceInfo> devices; // each with its ceilings
    RunFingerprint fingerprint;
    ProfileSettings settings;
    std::vector<std::string> warnings; // about the measurement (busy host, Debug build, ...)
    std::string containment;           // how workers' descendants were contained ("": none said)
    /// Which set of CPU ceilings the run used and why (profiling/ceilingcache.h writes it; its
    /// own schema, read by ceiling_set_note()). Null when none was chosen.
    nlohmann::json ceiling_set;
    /// Which set of each other device's figures it used (profiling/ceilingcache.h,
    /// prepare_device()), by device id. JSON: `ceiling_set.devices`, beside the CPU's.
    std::map<std::string, nlohmann::json> device_ceiling_sets;
    int repeat = 0; // profile --repeat passes (0: not repeated)
    std::optional<CeilingsProvenance> ceilings_from;
    /// The machine's drift through the run: the sentinel's times at its start, after each
    /// pass and at its end (WorkerController measures them). Unset in reports older than
    /// the control; compare then cannot say how far the machine moved.
    std::optional<DriftControl> control;
    nlohmann::json extra = nlohmann::json::object(); // keys this core does not know

    /// What the decoder left out, and why: a device entry its reader refused, a part of the
    /// wrong type. Not part of the JSON.
    std::vector<std::string> read_warnings;

    /// cpu_peaks' pinned CPU: where the 1-thread probes ran (-1: none).
    int pinned_cpu() const noexcept;

    /// One roofline ceiling of one device.
    struct DeviceCeiling {
        std::string device; // DeviceInfo::id
        Ceiling ceiling;
    };
    /// Every device's ceilings (bandwidth and compute, value > 0); for a device without
    /// ceilings (a report from before them) its headline peaks as "peak_bandwidth" and
    /// "peak_gflops", the source they give as the method.
    std::vector<DeviceCeiling> ceilings() const;

    nlohmann::json to_json() const;
    /// Never throws for a JSON object; anything else gives an empty context and a warning.
    static RunContext from_json(const nlohmann::json& context);
};

/// The context of a run `profiler` is about to measure, here and now: this build, the date,
/// host, CPU, the CPU ceilings in use (Profiler::cpu_peaks()), the clock, OpenBLAS, the run's
/// devices (prepared: their ceilings), the fingerprint, the settings and the run-level warnings.
SWITCHYARD_CORE_EXPORT RunContext run_context(const Profiler& profiler);

SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const RunContext& context);
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, RunContext& context);

} // namespace switchyard
