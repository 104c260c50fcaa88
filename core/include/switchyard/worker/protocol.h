// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

// The worker protocols: one JSON object per line, {"event": NAME, ...}, each message a type
// with one encoder and one parser used by both sides. The profile worker writes `Message`s,
// the WorkerController reads them, and `switchyard-cli profile --jsonl` prints the same events
// (docs/json.md describes them). The inspection worker (worker/inspect.h) reads an
// `InspectRequest` on its stdin and writes `InspectMessage`s.

#include <switchyard/kernels/probes.h>
#include <switchyard/profiling/profilerow.h>
#include <switchyard/profiling/profilesettings.h>
#include <switchyard/registry/backendcause.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/registry/resolution.h>
#include <switchyard/report/runcontext.h>
#include <switchyard/sdk/device.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace switchyard::protocol {

enum class Event {
    Context,  // {"context": {...}?, "peaks": {...}?}: the run's context (first worker only), CPU
              // peaks
    Plan,     // {"rows": [RowSpec, ...]}: every row of the run, in order
    RowStart, // {"index": N, "pass": P?}: row N starts (in pass P of a run of several; absent: 0)
    Progress, // {"index": N, "phase": "warmup", "samples": S}: a heartbeat inside row N
    Row,      // {"row": ProfileRow, "pass": P?}: row N finished (crashed and timed-out rows too)
    Done,     // {} from the worker; {"rows": N, "not_ok": M} from --jsonl
    Fatal,    // {"message": "...", "usage": true?}: the run cannot go on
    Control,  // {"when": "after pass 1", "median": s}: the drift control, timed by the worker
              // between two passes (no row runs then); from the profile worker only
    Turn,     // {"index": N, "median": s, "samples": S, "last": true?}: an A/B side's chunk of
              // row N in lockstep (SliceCommand::chunk_s) ended with S samples of this median;
              // it waits for its next turn unless `last` (its budget is spent)
};

/// The stable event names: "context", "plan", "row_start", "progress", "row", "done", "fatal",
/// "control", "turn".
SWITCHYARD_CORE_EXPORT std::string_view to_string(Event event) noexcept;
SWITCHYARD_CORE_EXPORT std::optional<Event> event_from_string(std::string_view name) noexcept;

/// One protocol message, parsed. Only the fields of its event are meaningful.
struct SWITCHYARD_CORE_EXPORT Message {
    Event event = Event::Done;
    std::optional<RunContext> context; // Context: none when the worker did not send one
    std::optional<CpuPeaks> peaks;     // Context: the CPU ceilings the worker used
    std::vector<RowSpec> plan;         // Plan
    std::int64_t index = -1;           // RowStart, Progress
    std::int64_t pass = 0;             // RowStart, Row: the pass of the run (0: the first)
    std::string phase;                 // Progress; Control: when it was timed
    double median = 0;                 // Control: the sentinel's seconds per launch; Turn
    std::int64_t samples = 0;          // Progress, Turn
    bool last = false;                 // Turn
    ProfileRow row;                    // Row
    std::optional<std::int64_t> rows_total, not_ok; // Done (from --jsonl)
    std::string message;                            // Fatal
    bool usage = false;                             // Fatal: a usage problem in the settings
};

/// `context` null: a worker past the first, which sends its peaks only.
SWITCHYARD_CORE_EXPORT nlohmann::json context_message(const RunContext* context,
                                                      const CpuPeaks* peaks = nullptr);

/// What the profile worker is asked: one JSON document on its stdin
/// ({"settings", "start", "peaks"?}), so any size of plan reaches it.
struct SWITCHYARD_CORE_EXPORT ProfileRequest {
    ProfileSettings settings;
    std::int64_t start = 0; // the first row of the plan to run (in pass `pass`)
    /// The pass of the run the worker starts in (JSON "pass", absent: 0). A profile worker
    /// makes every pass of the run (ProfileSettings::passes()) from there, pass after pass:
    /// a row's later slices keep its first one's parity, workload and warm-up, in one process.
    std::int64_t pass = 0;
    std::optional<CpuPeaks> peaks; // the run's CPU ceilings (every worker shares them)
    /// The folder the other devices keep their measured figures in (profiling/ceilingcache.h);
    /// "" for none. JSON "ceiling_cache" {"folder", "fresh", "max_age_days"}, absent for none.
    std::string ceiling_cache;
    CeilingCachePolicy ceiling_policy;
    /// Rows of the plan not to run (JSON "skip", absent when none): a row that crashed or
    /// hung in an earlier pass of the run is not run again.
    std::vector<std::int64_t> skip;
    /// An A/B side's worker (JSON "shared_buffers", absent: false): its placed CPU buffers
    /// are cut from the memory file at its descriptor 3, which the other side's worker maps
    /// too (CpuDevice::place_in_shared_file).
    bool shared_buffers = false;
    /// Where to map that file (JSON "shared_at", absent: 0, anywhere): the same address in
    /// both sides' workers.
    std::uint64_t shared_at = 0;
};
SWITCHYARD_CORE_EXPORT nlohmann::json to_json(const ProfileRequest& request);
/// Throws std::runtime_error naming the key path when malformed.
SWITCHYARD_CORE_EXPORT ProfileRequest profile_request_from_json(const nlohmann::json& j);
/// What an A/B side's worker (`__worker slices`, worker/abcontroller.h) is told next: one
/// line on its stdin after its ProfileRequest's, run one slice of row `index` of its plan,
/// with a `slices`-th of the budget (ProfileSettings::slice_settings; `first`: the row's first
/// slice, which warms up fully). It answers with the row's row_start and row messages.
/// `placement`: the slice's CPU buffers at the offsets this seed draws
/// (CpuDevice::vary_placement; under 2^53); 0: where the worker's heap puts them. The
/// controller sends both sides of a pair the same seed, a new one each pair.
/// `chunk_s` > 0: lockstep. The slice takes its samples in chunks of about `chunk_s` seconds
/// of sampling; after each it sends a Turn message and waits for a TurnCommand (the other
/// side's chunk runs meanwhile, its waiting not counted in the budget).
struct SWITCHYARD_CORE_EXPORT SliceCommand {
    std::int64_t index = 0;
    std::int64_t slices = 1;
    bool first = true;
    std::int64_t placement = 0;
    double chunk_s = 0;
};
SWITCHYARD_CORE_EXPORT nlohmann::json to_json(const SliceCommand& command);
/// Throws std::runtime_error naming the key path when malformed.
SWITCHYARD_CORE_EXPORT SliceCommand slice_command_from_json(const nlohmann::json& j);
/// What a side in lockstep waiting after a Turn is told: {"turn": "go"} (its next chunk) or
/// {"turn": "stop"} (end the row's sampling now).
SWITCHYARD_CORE_EXPORT nlohmann::json turn_command(bool go);
/// true for "go", false for "stop"; throws std::runtime_error for anything else.
SWITCHYARD_CORE_EXPORT bool turn_command_from_json(const nlohmann::json& j);
SWITCHYARD_CORE_EXPORT nlohmann::json turn_message(std::int64_t index, double median,
                                                   std::int64_t samples, bool last);
SWITCHYARD_CORE_EXPORT nlohmann::json plan_message(const std::vector<RowSpec>& plan);
SWITCHYARD_CORE_EXPORT nlohmann::json row_start_message(std::int64_t index, std::int64_t pass = 0);
SWITCHYARD_CORE_EXPORT nlohmann::json progress_message(std::int64_t index, const std::string& phase,
                                                       std::int64_t samples);
SWITCHYARD_CORE_EXPORT nlohmann::json row_message(const ProfileRow& row, std::int64_t pass = 0);
SWITCHYARD_CORE_EXPORT nlohmann::json control_message(const std::string& when, double median);
SWITCHYARD_CORE_EXPORT nlohmann::json done_message();
SWITCHYARD_CORE_EXPORT nlohmann::json done_message(std::int64_t rows_total, std::int64_t not_ok);
SWITCHYARD_CORE_EXPORT nlohmann::json fatal_message(const std::string& message, bool usage = false);

/// One line of the protocol as it goes on the wire (compact JSON, invalid UTF-8 replaced,
/// a trailing newline).
SWITCHYARD_CORE_EXPORT std::string to_line(const nlohmann::json& message);

/// The message in `j`; nullopt when it is not a protocol message (no "event" string, or
/// an unknown event). Throws std::runtime_error naming the key path when a known event
/// has a malformed body ("row.samples[2]: expected a number, got string").
SWITCHYARD_CORE_EXPORT std::optional<Message> parse(const nlohmann::json& j);

// --- The inspection worker (worker/inspect.h) ---

/// A plugin whose load ended the worker that loaded it.
struct SWITCHYARD_CORE_EXPORT FailedLoad {
    std::string backend;
    BackendCause cause = BackendCause::HookCrashed; // hook_exited, hook_crashed, hook_timed_out
    std::string reason; // "register hook called exit(0)", "... crashed (SIGSEGV) ..."
};

/// One fallback chain to resolve in the worker.
struct SWITCHYARD_CORE_EXPORT ResolveRequest {
    std::string op;
    std::string target = "cpu";
    std::string variant = "default";
};

/// A backend as the inspection worker saw it after loading it there.
struct SWITCHYARD_CORE_EXPORT InspectedBackend {
    BackendState state = BackendState::Discovered;
    BackendCause cause = BackendCause::None;
    std::string error; // empty exactly when cause is None
    std::vector<std::string> diagnostics;
    /// The device kinds it provides (its manifest's provides_devices, else the kinds of its
    /// declared cells; never "cpu"): a device listing that ends the worker is blamed on it.
    std::vector<std::string> device_kinds;
    std::string load_error; // the load threw (the message; state and cause say why too)

    static InspectedBackend of(const BackendInfo& info, std::string load_error = {});
};

/// What the inspection worker is asked: one JSON document on its stdin.
struct SWITCHYARD_CORE_EXPORT InspectRequest {
    std::vector<std::string> load;           // loaded first, in order, each announced
    std::vector<FailedLoad> failed;          // Failed there before anything loads
    std::vector<std::string> plugin_dirs;    // the folders it discovers; empty: its default
    std::optional<ResolveRequest> resolve;   // one chain; a bad op/target ends it (usage)
    std::vector<ResolveRequest> resolve_all; // chains whose errors are messages of their own
    bool devices = false;                    // list the devices (after the loads)
    bool probe = false;                      // ... measuring their ceilings
    /// Where the devices keep what their probes measured ("" none), as ProfileRequest's.
    std::string ceiling_cache;
    CeilingCachePolicy ceiling_policy;
};

SWITCHYARD_CORE_EXPORT nlohmann::json to_json(const InspectRequest& request);
/// Throws std::runtime_error naming the key path ("failed[0].cause: ...") when malformed.
SWITCHYARD_CORE_EXPORT InspectRequest inspect_request_from_json(const nlohmann::json& j);

enum class InspectEvent {
    Loading,         // {"backend"}: its code is about to run (a load asked for, or one that
                     // resolving reached)
    Backend,         // {"backend", "info": InspectedBackend}: a load finished
    Resolution,      // {"resolution": Resolution}: once per chain asked
    ResolutionError, // {"op", "message"}: a chain of resolve_all that could not be resolved
    Listing,         // {"kind"}: a device kind's provider enumerates its devices
    Probing,         // {"kind", "device"}: a device's ceilings are being measured
    Devices,         // {"devices": [DeviceInfo...], "errors": [{"kind", "message"}]?}:
                     // every device but the CPU, and what each provider that failed said
    Fatal,           // {"message", "usage": bool?}: fatal_message()
    Done,            // {}: done_message()
};

/// "loading", "backend", "resolution", "resolution_error", "listing", "probing", "devices",
/// "fatal", "done".
SWITCHYARD_CORE_EXPORT std::string_view to_string(InspectEvent event) noexcept;

/// One inspection message, parsed. Only the fields of its event are meaningful.
struct SWITCHYARD_CORE_EXPORT InspectMessage {
    InspectEvent event = InspectEvent::Done;
    std::string backend;             // Loading, Backend
    InspectedBackend info;           // Backend
    Resolution resolution;           // Resolution (without `cell`: the code stayed there)
    std::string op;                  // ResolutionError
    std::string kind;                // Listing, Probing
    std::string device;              // Probing: the device id
    std::vector<DeviceInfo> devices; // Devices (one that cannot be read is left out)
    /// Devices: (kind, message) for each provider that threw while listing, and for each
    /// device that could not be read.
    std::vector<std::pair<std::string, std::string>> listing_errors;
    std::string message; // ResolutionError, Fatal
    bool usage = false;  // Fatal: a problem in the request
};

SWITCHYARD_CORE_EXPORT nlohmann::json loading_message(const std::string& backend);
SWITCHYARD_CORE_EXPORT nlohmann::json backend_message(const std::string& backend,
                                                      const InspectedBackend& info);
SWITCHYARD_CORE_EXPORT nlohmann::json resolution_message(const Resolution& resolution);
SWITCHYARD_CORE_EXPORT nlohmann::json resolution_error_message(const std::string& op,
                                                               const std::string& message);
SWITCHYARD_CORE_EXPORT nlohmann::json listing_message(const std::string& kind);
SWITCHYARD_CORE_EXPORT nlohmann::json probing_message(const std::string& kind,
                                                      const std::string& device);
SWITCHYARD_CORE_EXPORT nlohmann::json
devices_message(const std::vector<DeviceInfo>& devices,
                const std::vector<std::pair<std::string, std::string>>& errors = {});

/// The inspection message in `j`; nullopt when it is not one (no "event" string, or an
/// unknown event). Throws std::runtime_error naming the key path when a known event has a
/// malformed body.
SWITCHYARD_CORE_EXPORT std::optional<InspectMessage> parse_inspect(const nlohmann::json& j);

} // namespace switchyard::protocol
