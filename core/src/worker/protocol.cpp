// SPDX-License-Identifier: MIT
#include <switchyard/worker/protocol.h>

#include "util/jsonread.h"

#include <array>

namespace switchyard::protocol {

namespace {

constexpr std::array<std::pair<Event, std::string_view>, 7> kNames = {{
    {Event::Context, "context"},
    {Event::Plan, "plan"},
    {Event::RowStart, "row_start"},
    {Event::Progress, "progress"},
    {Event::Row, "row"},
    {Event::Done, "done"},
    {Event::Fatal, "fatal"},
}};

nlohmann::json event(Event e) {
    return {{"event", std::string(to_string(e))}};
}

void read_body(const jsonread::Value& v, Message& m) {
    switch (m.event) {
    case Event::Context:
        if (const auto c = v.find("context"))
            m.context = c->expect(jsonread::Kind::Object).raw();
        if (const auto p = v.find("peaks"))
            m.peaks = p->raw();
        break;
    case Event::Plan: {
        const auto rows = v.at("rows").expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < rows.size(); ++i)
            m.plan.push_back(rows[i].get<RowSpec>());
        break;
    }
    case Event::RowStart:
        m.index = v.integer("index");
        break;
    case Event::Progress:
        m.index = v.integer("index", -1, -1);
        m.phase = v.str("phase", std::string());
        m.samples = v.integer("samples", 0);
        break;
    case Event::Row:
        m.row = v.get<ProfileRow>("row");
        break;
    case Event::Done:
        if (v.contains("rows"))
            m.rows_total = v.integer("rows");
        if (v.contains("not_ok"))
            m.not_ok = v.integer("not_ok");
        break;
    case Event::Fatal:
        m.message = v.str("message", std::string("the worker failed"));
        m.usage = v.boolean("usage", false);
        break;
    }
}

} // namespace

std::string_view to_string(Event e) noexcept {
    for (const auto& [event, name] : kNames)
        if (event == e)
            return name;
    return "done";
}

std::optional<Event> event_from_string(std::string_view name) noexcept {
    for (const auto& [event, n] : kNames)
        if (n == name)
            return event;
    return std::nullopt;
}

nlohmann::json context_message(const nlohmann::json& context, const nlohmann::json& peaks) {
    auto j = event(Event::Context);
    if (!context.is_null())
        j["context"] = context;
    if (!peaks.is_null())
        j["peaks"] = peaks;
    return j;
}

nlohmann::json plan_message(const std::vector<RowSpec>& plan) {
    auto j = event(Event::Plan);
    j["rows"] = plan;
    return j;
}

nlohmann::json row_start_message(std::int64_t index) {
    auto j = event(Event::RowStart);
    j["index"] = index;
    return j;
}

nlohmann::json progress_message(std::int64_t index, const std::string& phase,
                                std::int64_t samples) {
    auto j = event(Event::Progress);
    j["index"] = index;
    j["phase"] = phase;
    j["samples"] = samples;
    return j;
}

nlohmann::json row_message(const ProfileRow& row) {
    auto j = event(Event::Row);
    j["row"] = row;
    return j;
}

nlohmann::json done_message() {
    return event(Event::Done);
}

nlohmann::json done_message(std::int64_t rows_total, std::int64_t not_ok) {
    auto j = event(Event::Done);
    j["rows"] = rows_total;
    j["not_ok"] = not_ok;
    return j;
}

nlohmann::json fatal_message(const std::string& message, bool usage) {
    auto j = event(Event::Fatal);
    if (usage)
        j["usage"] = true;
    j["message"] = message;
    return j;
}

std::string to_line(const nlohmann::json& message) {
    return message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::optional<Message> parse(const nlohmann::json& j) {
    if (!j.is_object())
        return std::nullopt;
    const auto it = j.find("event");
    if (it == j.end() || !it->is_string())
        return std::nullopt;
    const auto e = event_from_string(it->get<std::string>());
    if (!e)
        return std::nullopt;
    Message m;
    m.event = *e;
    read_body(jsonread::Value::at_path(j, ""), m);
    return m;
}

} // namespace switchyard::protocol
