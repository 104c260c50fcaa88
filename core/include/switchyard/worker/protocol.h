// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

// The worker protocol: one JSON object per line, {"event": NAME, ...}. The profile worker
// writes it, the WorkerController reads it, and `switchyard-cli profile --jsonl` prints
// the same events (docs/json.md describes them).

#include <switchyard/profiling/profilerow.h>

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
    RowStart, // {"index": N}: row N starts
    Progress, // {"index": N, "phase": "warmup", "samples": S}: a heartbeat inside row N
    Row,      // {"row": ProfileRow}: row N finished (crashed and timed-out rows too)
    Done,     // {} from the worker; {"rows": N, "not_ok": M} from --jsonl
    Fatal,    // {"message": "...", "usage": true?}: the run cannot go on
};

/// The stable event names: "context", "plan", "row_start", "progress", "row", "done", "fatal".
SWITCHYARD_CORE_EXPORT std::string_view to_string(Event event) noexcept;
SWITCHYARD_CORE_EXPORT std::optional<Event> event_from_string(std::string_view name) noexcept;

/// One protocol message, parsed. Only the fields of its event are meaningful.
struct SWITCHYARD_CORE_EXPORT Message {
    Event event = Event::Done;
    nlohmann::json context;    // Context: null when the worker did not send one
    nlohmann::json peaks;      // Context: null when absent
    std::vector<RowSpec> plan; // Plan
    std::int64_t index = -1;   // RowStart, Progress
    std::string phase;         // Progress
    std::int64_t samples = 0;  // Progress
    ProfileRow row;            // Row
    std::optional<std::int64_t> rows_total, not_ok; // Done (from --jsonl)
    std::string message;                            // Fatal
    bool usage = false;                             // Fatal: a usage problem in the settings
};

SWITCHYARD_CORE_EXPORT nlohmann::json context_message(const nlohmann::json& context,
                                                      const nlohmann::json& peaks = nullptr);
SWITCHYARD_CORE_EXPORT nlohmann::json plan_message(const std::vector<RowSpec>& plan);
SWITCHYARD_CORE_EXPORT nlohmann::json row_start_message(std::int64_t index);
SWITCHYARD_CORE_EXPORT nlohmann::json progress_message(std::int64_t index, const std::string& phase,
                                                       std::int64_t samples);
SWITCHYARD_CORE_EXPORT nlohmann::json row_message(const ProfileRow& row);
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

} // namespace switchyard::protocol
