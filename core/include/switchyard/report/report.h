// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/profiling/profilerow.h>
#include <switchyard/report/dispatch.h>
#include <switchyard/report/runcontext.h>
#include <switchyard/sdk/device.h>
#include <switchyard/sdk/errors.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace switchyard {

/// A report that cannot be read: the message names the file, the position or key and
/// what was expected.
class SWITCHYARD_CORE_EXPORT ReportError : public Error {
public:
    using Error::Error;
};

/// A profile report: the context it was measured in (Profiler::context()) and its rows.
///
/// File format (JSON, docs/json.md): {"format": "switchyard.report", "format_version":
/// kFormatVersion, "context": {...}, "rows": [ProfileRow, ...], "dispatch": [DispatchFinding,
/// ...]}. Version 5 writes the context through RunContext (context.repeat and
/// context.warnings always present); version 4 added context.fingerprint and rows[].runs
/// (profile --repeat); versions 3 and 4 are read as they are. Version 2 reports (rows
/// with bandwidth_fraction / flops_fraction, no dispatch) and version 1 reports (format
/// "switchyard-profile-report") are still read.
struct SWITCHYARD_CORE_EXPORT Report {
    static constexpr const char* kFormat = "switchyard.report";
    static constexpr int kFormatVersion = 5;
    /// The format id of version 1 reports.
    static constexpr const char* kFormatV1 = "switchyard-profile-report";
    /// Reports larger than this are refused before parsing.
    static constexpr std::size_t kMaxBytes = std::size_t(512) << 20;
    /// Deeper nesting than this is refused before parsing (a hostile file).
    static constexpr int kMaxDepth = 64;
    /// Samples kept per row when reading (the profiler's default max_samples): the rest
    /// are read, dropped and said in `warnings`, so memory follows what is kept.
    static constexpr std::size_t kMaxSamplesPerRow = 100000;

    /// What the run was measured in (run_context(), then the worker controller's and the
    /// front end's additions): typed, read and written only through RunContext.
    RunContext context;
    std::vector<ProfileRow> rows;
    /// The dispatch-regret findings of an --all-variants run (annotate()).
    std::vector<DispatchFinding> dispatch;
    /// What parse() capped ("rows with more than 100000 samples: 3; ..."); not saved.
    std::vector<std::string> warnings;

    /// Derives what follows from the rows: each row's speedup over the reference, and the
    /// dispatch findings. Run once the rows are all there (the profile run does).
    void annotate();
    nlohmann::json to_json() const;
    /// Throws ReportError naming the bad key ("rows[2].stats.median: expected a number,
    /// got string").
    static Report from_json(const nlohmann::json& j);

    /// Parses report text; never crashes on malformed, truncated or hostile input
    /// (too big, too deep, wrong types): throws ReportError instead.
    static Report parse(std::string_view text, const std::string& origin = "report");
    /// Reads a file ("-": the standard input; a pipe is read to its end); ReportError when
    /// it cannot be opened or parsed, or is not a regular file or a pipe (a folder, a device).
    static Report load(const std::string& path);
    /// Writes without ever destroying anything (util/safefile.h): a regular file is
    /// replaced atomically, keeping its mode (temporary file created exclusively, fsync,
    /// rename); a symlink to a regular file has its target replaced and stays a link; a
    /// FIFO, a terminal, /dev/null or a standard stream is written through; anything else
    /// is refused. ReportError on failure, the previous file intact.
    void save(const std::string& path) const;
    /// Whether save(path) could write now (util/safefile.h's check, a file created and
    /// removed in its folder): a command checks its output before it measures. ReportError
    /// naming the path and why.
    static void check_writable(const std::string& path);
    /// save(path); when that fails, the report goes to a fallback file instead, so a run is
    /// never lost: `switchyard-report-<UTC time>-<pid>.json` in the temporary folder
    /// (TMPDIR, else /tmp). Returns "" when `path` was written, else the fallback's path,
    /// with `why` saying why `path` was not. ReportError when neither can be written.
    std::string save_with_fallback(const std::string& path, std::string& why) const;

    /// Rows as CSV (one line per row, header first).
    std::string to_csv() const;
    /// The reports of a folder (a fleet folder: `fleet collect` leaves
    /// report-<host>-<job>_<task>.json there): its regular files named report*.json,
    /// sorted by name. `compare FOLDER`, `check FOLDER` and the GUI's fleet table read
    /// these. Throws ReportError when `folder` is not a folder or cannot be listed.
    static std::vector<std::string> files_in(const std::string& folder);
};
SWITCHYARD_CORE_EXPORT void to_json(nlohmann::json& j, const Report& report);
/// Throws ReportError naming the key path of the first problem.
SWITCHYARD_CORE_EXPORT void from_json(const nlohmann::json& j, Report& report);

} // namespace switchyard
