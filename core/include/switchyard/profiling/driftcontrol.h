// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace switchyard {

/// The drift control of a run (context.control): one short, fixed sentinel measured at
/// intervals through the run (at its start, after each pass, at its end), so a report says
/// how fast the machine itself ran while it measured, and two reports made apart say how
/// far the machine moved between them. The sentinel is the same everywhere and never
/// changes with the build: the scalar CPU reference of flow_match_step over kSentinelSize
/// elements (144 KiB: a cache-resident loop, moved by the clock, the host's steal and
/// the neighbours on the shared caches), its median over kSentinelBatches timed batches.
struct SWITCHYARD_CORE_EXPORT DriftControl {
    static constexpr const char* kSentinel = "flow_match_step 12288 cpu generic/reference";
    static constexpr long kSentinelSize = 12288;
    static constexpr int kSentinelBatches = 15;

    struct Sample {
        std::string when;  // "start", "after pass 2", "end"
        double at_s = 0;   // seconds since the run started
        double median = 0; // the sentinel's median time per launch, seconds
    };
    std::string sentinel = kSentinel; // what was measured (a reader compares only like)
    std::vector<Sample> samples;

    /// At least two samples of a positive time: the run's drift is known.
    bool usable() const;
    /// The median of the samples' times (0 without samples).
    double center() const;
    /// The slowest sample over the fastest (1 without two samples): how far the machine
    /// moved within the run.
    double range() const;
    double fastest() const; // the smallest time (0 without samples)
    double slowest() const; // the largest time
    /// "the control ran 10.2-13.9 us (1.36x) over 6 samples".
    std::string text() const;

    nlohmann::json to_json() const;
    /// Throws std::runtime_error naming the key path ("control.samples[1].median: ...").
    static DriftControl from_json(const nlohmann::json& j);
};

/// How far the machine alone moved between two runs, from their controls (B against A): the
/// ratios of B's sentinel times over A's, from B's fastest over A's slowest to B's slowest
/// over A's fastest. A row's ratio inside that range can be the machine's drift alone.
struct SWITCHYARD_CORE_EXPORT MachineDrift {
    bool known = false; // both controls usable and of the same sentinel
    double center = 1;  // B's center over A's
    double low = 1;     // B's fastest over A's slowest
    double high = 1;    // B's slowest over A's fastest
    /// The largest relative difference the drift can explain, either way: max(high, 1/low) - 1.
    double explains() const;
    /// "the machine's control ran 0.92-1.41x as long in B as in A (center 1.12x): a
    /// difference up to 41 % can be the machine's drift".
    std::string text() const;

    static MachineDrift between(const DriftControl& a, const DriftControl& b);
};

/// Times the sentinel once, here and now (about 10-20 ms): the median time per launch.
SWITCHYARD_CORE_EXPORT double measure_sentinel();

} // namespace switchyard
