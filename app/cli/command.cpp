// SPDX-License-Identifier: MIT
#include "command.h"

#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendinfoformat.h>
#include <switchyard/registry/suggest.h>
#include <switchyard/sdk/errors.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string_view>
#include <utility>

namespace switchyard::cli {

namespace {

// A net under the commands, which escape untrusted text where it enters a message
// (untrusted()): a control character that still reaches stdout is escaped with the same
// function, line by line, so the tool's own newlines and tabs stay. The tool's own text has no
// other control characters, so this never changes it. JSON output is unchanged (it has no raw
// control characters but its newlines). A C1 lead byte is held until the next byte is known.
class EscapingBuffer : public std::streambuf {
public:
    explicit EscapingBuffer(std::ostream& stream) : m_stream(stream), m_target(stream.rdbuf()) {
        m_stream.rdbuf(this);
    }
    ~EscapingBuffer() override {
        flush_pending();
        m_stream.rdbuf(m_target);
    }
    EscapingBuffer(const EscapingBuffer&) = delete;
    EscapingBuffer& operator=(const EscapingBuffer&) = delete;

protected:
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof()))
            return traits_type::not_eof(c);
        const char ch = traits_type::to_char_type(c);
        return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
        // The common case, nothing to escape, goes through without a copy.
        const std::string_view view(s, std::size_t(n));
        if (m_pending.empty() && !view.empty() && static_cast<unsigned char>(view.back()) != 0xc2 &&
            std::none_of(view.begin(), view.end(), [](char ch) {
                const auto c = static_cast<unsigned char>(ch);
                return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == 0xc2;
            }))
            return m_target->sputn(s, n) == n ? n : 0;
        std::string text = m_pending + std::string(s, std::size_t(n));
        m_pending.clear();
        if (!text.empty() && static_cast<unsigned char>(text.back()) == 0xc2) {
            m_pending = "\xc2";
            text.pop_back();
        }
        std::string out;
        std::size_t start = 0;
        for (std::size_t i = 0; i <= text.size(); ++i)
            if (i == text.size() || text[i] == '\n' || text[i] == '\t') {
                out += untrusted(std::string_view(text).substr(start, i - start));
                if (i < text.size())
                    out += text[i];
                start = i + 1;
            }
        m_target->sputn(out.data(), std::streamsize(out.size()));
        return n;
    }
    int sync() override {
        flush_pending();
        return m_target->pubsync();
    }

private:
    void flush_pending() {
        if (!m_pending.empty())
            m_target->sputn(m_pending.data(), std::streamsize(m_pending.size()));
        m_pending.clear();
    }

    std::ostream& m_stream;
    std::streambuf* m_target;
    std::string m_pending;
};

} // namespace

void set_action(CLI::App* command, Context& context, std::function<int()> fn) {
    command->callback([&context, fn = std::move(fn)]() {
        const EscapingBuffer escaping(std::cout);
        const auto search_path = PluginSearchPath::from_environment();
        for (const auto& w : search_path.warnings())
            std::cerr << "switchyard-cli: warning: " << untrusted(w) << "\n";
        try {
            context.exit_code = fn();
        } catch (const InvalidBackend& e) {
            std::cerr << "switchyard-cli: " << e.what() << "\n";
            context.exit_code = Usage;
        } catch (const std::invalid_argument& e) {
            std::cerr << "switchyard-cli: " << e.what() << "\n";
            context.exit_code = Usage;
        } catch (const std::exception& e) {
            std::cerr << "switchyard-cli: " << e.what() << "\n";
            context.exit_code = Failure;
        }
    });
}

namespace {

std::string shown(const std::string& text) {
    return "'" + untrusted(text.size() > 64 ? text.substr(0, 64) + "..." : text) + "'";
}

std::string number_text(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}

} // namespace

CLI::Validator number_in(double lo, bool lo_open, double hi, const std::string& what) {
    const std::string rule = "must be " + what + (lo_open ? " > " : " >= ") + number_text(lo) +
                             " and at most " + number_text(hi);
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            const char* begin = text.c_str();
            char* end = nullptr;
            errno = 0;
            const double v = std::strtod(begin, &end);
            const bool parsed = !text.empty() && end == begin + text.size() && errno == 0;
            if (!parsed || !std::isfinite(v) || v < lo || (lo_open && v == lo) || v > hi)
                return rule + ", got " + shown(text);
            return {};
        },
        "", "");
}

CLI::Validator integer_in(std::int64_t lo, std::int64_t hi) {
    const std::string rule =
        "must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            std::int64_t v = 0;
            const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (text.empty() || ec != std::errc{} || p != text.data() + text.size() || v < lo ||
                v > hi)
                return rule + ", got " + shown(text);
            return {};
        },
        "", "");
}

std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
    // Every cell on one line, its control characters (newlines included) visible.
    std::vector<std::vector<std::string>> escaped;
    escaped.reserve(rows.size());
    for (const auto& r : rows) {
        auto& e = escaped.emplace_back();
        for (const auto& cell : r)
            e.push_back(untrusted(cell));
    }
    std::vector<std::size_t> width(header.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size() && i < width.size(); ++i)
            width[i] = std::max(width[i], row[i].size());
    };
    measure(header);
    for (const auto& r : escaped)
        measure(r);
    std::string out;
    auto emit = [&](const std::vector<std::string>& row) {
        std::string line;
        for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size())
                line += std::string(width[i] - row[i].size() + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    };
    emit(header);
    for (const auto& r : escaped)
        emit(r);
    return out;
}

void add_load_timeout_option(CLI::App* cmd, double& seconds) {
    cmd->add_option("--load-timeout", seconds,
                    "Seconds a plugin's load (dlopen and its register hook) may take in the "
                    "inspection worker before it is killed and the plugin marked failed")
        ->check(number_in(0, true, 7 * 24 * 3600, "a finite number of seconds"))
        ->capture_default_str();
}

void add_probe_timeout_option(CLI::App* cmd, double& seconds) {
    cmd->add_option("--probe-timeout", seconds,
                    "Seconds a device backend may take to list its devices, or to probe one "
                    "device, in the inspection worker before it is killed and marked failed")
        ->check(number_in(0, true, 7 * 24 * 3600, "a finite number of seconds"))
        ->capture_default_str();
}

std::string command_line_typo(CLI::App& app, const std::vector<std::string>& args) {
    CLI::App* at = &app;
    std::string path = app.get_name();
    bool past_subcommands = false; // a positional here is a value, not a subcommand
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "--")
            break;
        if (arg.size() > 1 && arg[0] == '-') {
            const bool is_long = arg.rfind("--", 0) == 0;
            const auto eq = arg.find('=');
            const std::string name = is_long ? arg.substr(0, eq) : arg.substr(0, 2);
            const CLI::Option* option = at->get_option_no_throw(name);
            if (!option) {
                std::vector<std::string> known;
                for (const auto* o : std::as_const(*at).get_options()) {
                    for (const auto& n : o->get_lnames())
                        known.push_back("--" + n);
                    for (const auto& n : o->get_snames())
                        known.push_back("-" + n);
                }
                // The program's name starts the line already: the subcommand's path names where.
                const auto where = path.substr(std::min(path.size(), app.get_name().size() + 1));
                return (where.empty() ? std::string() : where + ": ") +
                       switchyard::unknown_name("option", name, known, false) + " (" + path +
                       " --help lists them)";
            }
            // Its value is the next word unless given with '=' (or glued to a short option).
            if (option->get_expected_min() > 0 &&
                (is_long ? eq == std::string::npos : arg.size() == 2))
                ++i;
            continue;
        }
        if (past_subcommands)
            continue;
        const auto subs = at->get_subcommands([](CLI::App*) { return true; });
        if (subs.empty()) {
            past_subcommands = true;
            continue;
        }
        CLI::App* found = nullptr;
        std::vector<std::string> names; // the ones --help shows
        for (auto* sub : subs) {
            if (sub->check_name(arg))
                found = sub;
            if (!sub->get_group().empty())
                names.push_back(sub->get_name());
        }
        if (!found)
            return switchyard::unknown_name("command", arg, names) + " (" + path + " --help)";
        at = found;
        path += " " + arg;
    }
    return {};
}

std::string command_line_typo(CLI::App& app, int argc, char** argv) {
    return command_line_typo(app, std::vector<std::string>(argv + std::min(argc, 1), argv + argc));
}

nlohmann::json envelope(const std::string& command, nlohmann::json body) {
    nlohmann::json out = {{"format", "switchyard." + command}, {"format_version", 1}};
    out.update(body);
    return out;
}

} // namespace switchyard::cli
