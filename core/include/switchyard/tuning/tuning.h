// SPDX-License-Identifier: MIT
#pragma once

// Tuned dispatch: a measured winner kept per (op, device, size range), with the evidence and
// the identity of the code measured (docs/json.md, "switchyard.tuning"). `tune` writes it from
// an --all-variants run (tuning/tune.h); resolution follows it entry by entry, each entry
// only where its machine and both cells' code still match (tuning/tunedresolve.h).

#include <switchyard/core_export.h>

#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/codeidentity.h>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard {

/// One cell of an entry: "arch/variant" and its code.
struct SWITCHYARD_CORE_EXPORT TunedCell {
    std::string cell; // "x86-64-v4/threaded"
    CodeIdentity code;
    /// The cell's arch and variant ("x86-64-v4", "threaded"); both "" for a cell without
    /// the slash.
    std::string arch() const;
    std::string variant() const;
};

/// What one measured size said: the chosen cell against the one the chain picked.
struct SWITCHYARD_CORE_EXPORT TuningEvidence {
    std::string size; // "2048x2048x2048"
    double chosen_median_s = 0, overridden_median_s = 0;
    double speedup = 1;                // overridden / chosen (> 1: the chosen is faster)
    double p_value = 1, threshold = 0; // the dispatch-regret rule's test and threshold
    int runs = 1;                      // runs per row (profile --repeat)
};

/// One (op, device, variant, size range): use `chosen` instead of the chain's `overrides`.
struct SWITCHYARD_CORE_EXPORT TuningEntry {
    std::string op, device, variant = "default"; // device: the kernel key's device kind
    /// The sizes measured in the range, and the range by work (the product of the dims):
    /// the entry applies to a size whose work is within [min_work, max_work].
    std::vector<std::string> sizes;
    double min_work = 0, max_work = 0;
    TunedCell chosen, overrides;
    std::vector<TuningEvidence> evidence; // one per size
    std::string date;                     // UTC ISO 8601, of the run
    std::string report;                   // the report it came from ("" when none was saved)

    /// "gemm on cpu, 1024x1024x1024 - 2048x2048x2048".
    std::string label() const;
    /// The sizes it was tuned for: "1024x1024x1024 to 2048x2048x2048", the one size, or "its
    /// sizes" where none is named.
    std::string sizes_text() const;
    /// The smallest speedup of the evidence (what the entry promises at least).
    double speedup() const;
};

/// A tuning file: one machine's entries.
struct SWITCHYARD_CORE_EXPORT Tuning {
    std::string machine_id;                            // of the machine it was measured on
    nlohmann::json machine = nlohmann::json::object(); // that fingerprint's machine part
    std::string core_version;
    std::string created; // UTC ISO 8601
    std::vector<TuningEntry> entries;
    /// Read back: where it was read from, and the entries that could not be read (each
    /// with its index and why; the others are kept).
    std::string source;
    std::vector<std::string> read_warnings;

    nlohmann::json to_json() const;
    /// A malformed entry is dropped with a warning, not the whole file; a document that is
    /// not a tuning at all throws std::runtime_error saying what it is.
    static Tuning from_json(const nlohmann::json& j, std::string source = {});
    /// Reads and parses a file (jsonread's limits); throws std::runtime_error naming it.
    static Tuning load(const std::string& path);
    /// Writes atomically (a crash leaves the old file); throws std::runtime_error.
    void save(const std::string& path) const;
};

/// Where tuning files are read from: every file named in SWITCHYARD_TUNING (colon-separated;
/// a folder stands for its *.tuning files), then the *.tuning files of the user's data folder
/// ($XDG_DATA_HOME/switchyard/tuning, else ~/.local/share/switchyard/tuning).
SWITCHYARD_CORE_EXPORT std::vector<std::string> tuning_paths();
/// The user's tuning folder (where `tune` writes by default).
SWITCHYARD_CORE_EXPORT std::string user_tuning_dir();
/// Where `tune` writes a machine's tuning by default: <user_tuning_dir()>/<machine_id>.tuning.
/// Throws std::invalid_argument when there is no home folder to keep it in.
SWITCHYARD_CORE_EXPORT std::string default_tuning_file(const std::string& machine_id);
/// The run's report beside its tuning: "<file without .tuning>.<date>.report.json".
SWITCHYARD_CORE_EXPORT std::string report_beside(const std::string& tuning_file,
                                                 const std::string& date);
/// `fresh` with the entries of `file` for other (op, device, variant)s kept beside its own:
/// tuning gemm does not forget what an earlier run found for rms_norm. A file of another
/// machine, or one that cannot be read, is replaced; `notes` says so.
SWITCHYARD_CORE_EXPORT Tuning merge_with_file(Tuning fresh, const std::string& file,
                                              std::vector<std::string>& notes);

/// The tunings of tuning_paths(), each read on its own: a file that cannot be read is a
/// problem of that file, said in `problems` ("<path>: why"), never of the others.
struct SWITCHYARD_CORE_EXPORT TuningSet {
    std::vector<Tuning> tunings;
    std::vector<std::string> problems;
    bool empty() const noexcept { return tunings.empty(); }
};
SWITCHYARD_CORE_EXPORT TuningSet load_tunings(const std::vector<std::string>& paths);

/// The identity of a machine as a tuning for `device_kind` needs it: the fingerprint id
/// (profiling/fingerprint.h) of the machine part, with the host's GPUs for a device kind
/// other than "cpu" and none for the CPU, whose tuning then still applies after a GPU was
/// added. A fingerprint written before one identity per host (its "gpus" the devices a run
/// selected, without "model") is read without them, so its tunings still apply here.
SWITCHYARD_CORE_EXPORT std::string machine_id_for(const nlohmann::json& machine,
                                                  std::string_view device_kind);

/// The work of a size: the product of its nonzero dims.
SWITCHYARD_CORE_EXPORT double size_work(const std::array<std::int64_t, 3>& dims) noexcept;

} // namespace switchyard
