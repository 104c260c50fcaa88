// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/kernels/probes.h>
#include <switchyard/sdk/device.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace switchyard {

/// Days a cached set of CPU ceilings is used for before a run measures them again (the
/// default of `profile --ceilings-max-age`, SWITCHYARD_CEILINGS_MAX_AGE and the GUI's
/// setting).
inline constexpr double kDefaultCeilingsMaxAgeDays = 7;

/// What a set of CPU ceilings holds for: the machine part of the fingerprint
/// (machine_fingerprint() without GPUs, which the CPU's ceilings do not depend on: CPU,
/// microcode, caches, memory, ISA level and cap, OpenBLAS core), the host, the software
/// that measured them (the core's version, commit, build type, compiler, sanitizer) and
/// the kernel. A set is used only where all of them are what this process has.
struct SWITCHYARD_CORE_EXPORT CeilingSetOrigin {
    std::string machine_id; // fingerprint_id(machine)
    nlohmann::json machine; // the machine part, to name what changed
    std::string host;       // host_info().hostname: nodes of one class differ
    std::string software;   // "switchyard 0.9.0 (abc1234, Release, GCC 12.2.0)"
    std::string kernel;     // host_info().os
    /// This process's: the machine, the core and the kernel it runs on.
    static CeilingSetOrigin here();
    /// "" when `now` is the same; else what differs, worded for a note ("measured on another
    /// machine (cpu.microcode (0xa101144, now 0xa101148))", "measured under another kernel
    /// (...)").
    std::string difference(const CeilingSetOrigin& now) const;
    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the bad key ("origin.machine_id: expected a string").
    static CeilingSetOrigin from_json(const nlohmann::json& j);
};

/// One cached set: the ceilings, where and when they were measured.
struct SWITCHYARD_CORE_EXPORT CachedCeilings {
    CeilingSetOrigin origin;
    std::int64_t measured_unix = 0; // seconds since the epoch
    std::string measured;           // the same, ISO 8601 UTC ("2026-12-05T14:02:11Z")
    CpuPeaks peaks;
    /// {"format": "switchyard.ceilings", "format_version": 1, "origin", "measured",
    ///  "measured_unix", "cpu_peaks"}
    nlohmann::json to_json() const;
    static CachedCeilings from_json(const nlohmann::json& j); // throws std::runtime_error
};

/// When a run may use a cached set.
struct SWITCHYARD_CORE_EXPORT CeilingCachePolicy {
    bool fresh = false;                               // --fresh-ceilings: measure, then store
    double max_age_days = kDefaultCeilingsMaxAgeDays; // older sets are measured again
};

/// A run's CPU ceilings: the cached set it uses, or why it measures them, and what it
/// records in its report (`context.ceiling_set`, docs/json.md).
struct SWITCHYARD_CORE_EXPORT CeilingSetChoice {
    std::optional<CpuPeaks> peaks; // set: the run uses these instead of probing
    nlohmann::json set;            // context.ceiling_set
    bool store = false;            // the run measures; keep its set in the cache
    CeilingSetOrigin origin;       // this process's (what a stored set is keyed by)
};

/// What a device other than the CPU measured in its prepare() (sdk/device.h's PreparedState:
/// its peaks, ceilings and sweep), kept like the CPU's ceilings: for the same host, core and
/// kernel (`origin`, as the CPU's) and the same device identity (its runtime, device and
/// driver).
struct SWITCHYARD_CORE_EXPORT CachedDeviceCeilings {
    CeilingSetOrigin origin;
    std::string identity;           // PreparedState::prepared_identity()
    std::int64_t measured_unix = 0; // seconds since the epoch
    std::string measured;           // the same, ISO 8601 UTC
    DeviceInfo prepared;            // the device's info() after prepare()
    /// {"format": "switchyard.device-ceilings", "format_version": 1, "origin", "identity",
    ///  "measured", "measured_unix", "device"}
    nlohmann::json to_json() const;
    static CachedDeviceCeilings from_json(const nlohmann::json& j); // throws std::runtime_error
};

/// A device's figures for a run: the cached ones it adopts, or why it measures them, and what
/// the report records (`context.ceiling_set.devices[<id>]`).
struct SWITCHYARD_CORE_EXPORT DeviceCeilingChoice {
    std::optional<DeviceInfo> prepared; // set: the device adopts these instead of probing
    nlohmann::json set;
    bool store = false; // the device measures; keep what it measured
    CeilingSetOrigin origin;
    std::string identity;
};

/// Measured CPU ceilings kept between runs, one file per host and machine in `folder`
/// (`ceilings-<host>-<machine_id>.json`; a shared home folder holds each node's). The
/// front ends get theirs from the composition root (runtime.h, default_ceiling_cache()),
/// which reads SWITCHYARD_CEILINGS_CACHE and the user's data folder; nothing here is
/// process-wide.
class SWITCHYARD_CORE_EXPORT CeilingCache {
public:
    explicit CeilingCache(std::string folder);
    const std::string& folder() const { return m_folder; }
    /// The file a set measured at `origin` is kept in.
    std::string file_for(const CeilingSetOrigin& origin) const;

    /// The set this run uses, from the cache where one matches `choice.origin` and is at
    /// most `policy.max_age_days` old at `now_unix`; else a choice to measure that says why
    /// (no set, another machine, core or kernel, too old, an unreadable file, --fresh).
    /// Never throws for what the file holds.
    CeilingSetChoice choose(const CeilingCachePolicy& policy, std::int64_t now_unix) const;
    /// After a run measured `peaks` (choice.store): keeps them, and records in choice.set
    /// where ("stored") or why not ("store_error"). Never throws.
    void record(CeilingSetChoice& choice, const CpuPeaks& peaks, std::int64_t now_unix) const;

    /// The file a device's figures measured at `origin` are kept in
    /// (`device-<host>-<hash of the machine and the identity>.json`).
    std::string file_for_device(const CeilingSetOrigin& origin, const std::string& identity) const;
    /// As choose(), for a device of `identity` (PreparedState::prepared_identity()).
    DeviceCeilingChoice choose_device(const std::string& identity, const CeilingCachePolicy& policy,
                                      std::int64_t now_unix) const;
    /// As record(), for what a device measured (its info() after prepare()).
    void record_device(DeviceCeilingChoice& choice, const DeviceInfo& prepared,
                       std::int64_t now_unix) const;

private:
    std::string m_folder;
};

/// Prepares a device other than the CPU through `cache` (nullptr: no cache): a device that
/// keeps its figures (PreparedState) adopts a cached set of its identity, or measures and the
/// set is kept; any other device just prepares. Returns what the report records for it in
/// `context.ceiling_set.devices[<id>]` ({"source": "cache" | "measured", ...}; null for a
/// device that keeps nothing). Idempotent per device, like prepare().
SWITCHYARD_CORE_EXPORT nlohmann::json prepare_device(Device& device, const CeilingCache* cache,
                                                     const CeilingCachePolicy& policy);

/// The choice of a run without a cache (SWITCHYARD_CEILINGS_CACHE=off): it measures.
SWITCHYARD_CORE_EXPORT CeilingSetChoice uncached_ceiling_choice(const std::string& why);

/// The choice of a run given an earlier report's ceilings (`profile --ceilings-from`, which
/// overrides the cache): context.ceiling_set {"source": "report", "report", "measured", "id"}.
SWITCHYARD_CORE_EXPORT CeilingSetChoice reported_ceiling_choice(const std::string& report,
                                                                const std::string& measured,
                                                                CpuPeaks peaks);

/// One line for the CLI's note and the GUI's log, from context.ceiling_set: "ceilings from
/// 2026-12-05 14:02, this machine; --fresh-ceilings re-measures" (the time in local time),
/// or "ceilings measured in this run (no cached set for this machine); kept for the next
/// runs in FILE". "" for a context without one.
SWITCHYARD_CORE_EXPORT std::string ceiling_set_note(const nlohmann::json& set);

} // namespace switchyard
