// SPDX-License-Identifier: MIT
#pragma once

#include "command.h"

#include <switchyard/profiling/profilesettings.h>
#include <switchyard/report/report.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace switchyard::cli {

/// What `profile`, `tune` and `compare --calibrate --runs` are asked to run.
struct ProfileOptions {
    std::vector<std::string> ops, devices, sizes, cells;
    bool all_variants = false, cold = false, json = false, jsonl = false, csv = false,
         no_tuning = false;
    std::string variant = "default", output;
    std::string ceilings_from;              // an earlier report whose CPU ceilings this run reuses
    bool fresh_ceilings = false;            // measure them, and refresh the cache
    std::optional<double> ceilings_max_age; // days; unset: SWITCHYARD_CEILINGS_MAX_AGE's
    // The defaults are ProfileSettings' own (noise in percent).
    double timeout = ProfileSettings{}.row_timeout_s, budget = ProfileSettings{}.time_budget_s,
           noise = ProfileSettings{}.max_noise * 100, warmup = ProfileSettings{}.warmup_s;
    double reference_budget = ProfileSettings{}.reference_budget_s;
    double throttle_threshold = ProfileSettings{}.throttle_threshold;
    std::int64_t min_samples = ProfileSettings{}.min_samples,
                 seed = std::int64_t(ProfileSettings{}.seed), repeat = ProfileSettings{}.repeat,
                 slices = ProfileSettings{}.slices;
};

/// The options profile, tune and compare --calibrate --runs share: what to run, and how long
/// each row may take.
/// The options added, for a command that must tell whether any was given.
std::vector<const CLI::Option*> add_run_options(CLI::App* cmd, ProfileOptions& options);
/// One run as `profile` makes it (in a worker): the report; a line per
/// finished row on stderr unless `o.json`.
Report measure_report(const ProfileOptions& o);

/// The settings a `switchyard-cli profile ARGS...` run would use (fleet submit's, checked
/// before it writes a script): ARGS parsed by the profile command's own options (names,
/// ranges), then every name checked as a run elsewhere needs (check_profile_names, with
/// declared cells enough). Nothing runs. std::invalid_argument naming the input otherwise.
ProfileSettings checked_profile_settings(const std::vector<std::string>& args);

/// profile, hardware, and the hardware listing (the profile worker is `__worker profile`,
/// worker/workermain.h).
void add_profile_commands(CLI::App& app, Context& context);
/// compare (two or more reports) and check (reports against references with tolerances).
void add_compare_commands(CLI::App& app, Context& context);

} // namespace switchyard::cli
