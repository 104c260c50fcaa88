// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/dependencies.h>
#include <switchyard/registry/backendinfoformat.h>

#include <switchyard/sdk/version.h>

#include "util/jsonread.h"
#include "util/textutil.h"

#include <algorithm>
#include <sstream>

namespace switchyard {
namespace {

using nlohmann::json;

json cell_json(const DeclaredCell& c) {
    return {{"key", c.key}, {"workspace_bytes", c.workspace_bytes}};
}

json optional_version(const std::optional<std::string>& v) {
    return v ? json(*v) : json(nullptr);
}

// A string from a manifest, a library or the file system, safe to print on one line.
std::string e(std::string_view text) {
    return text::untrusted(text);
}

// A multi-line text built from what a library's ELF file says (the dependency report):
// each line escaped on its own.
std::string e_lines(const std::string& text) {
    std::string out;
    for (const auto& line : text::split(text, "\n", true))
        out += (out.empty() ? "" : "\n") + text::untrusted(line);
    return out;
}

using Values = std::initializer_list<std::pair<std::string_view, std::string>>;

// `tmpl` with each "{name}" replaced by its value (values are already escaped).
std::string fill(std::string_view tmpl, Values values) {
    std::string out(tmpl);
    for (const auto& [name, value] : values) {
        const std::string key = "{" + std::string(name) + "}";
        for (auto at = out.find(key); at != std::string::npos;
             at = out.find(key, at + value.size()))
            out.replace(at, key.size(), value);
    }
    return out;
}

// The first clause of a stored message: its first line, without the "invalid manifest PATH: "
// that every manifest error starts with (the summary names the manifest), up to the first
// "; " (the errors of one manifest are joined with it), escaped and cut to `limit`
// characters at a UTF-8 boundary.
std::string first_clause(const BackendInfo& info, std::size_t limit) {
    std::string_view text = info.error;
    text = text.substr(0, text.find('\n'));
    for (const std::string& prefix : {"invalid manifest " + info.manifest_path + ": ",
                                      "Cannot load backend '" + info.name + "': "})
        if (text.starts_with(prefix))
            text.remove_prefix(prefix.size());
    text = text.substr(0, text.find("; "));
    std::string out = e(text);
    if (out.size() > limit) {
        std::size_t cut = limit - 3;
        while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80)
            --cut; // not inside a UTF-8 sequence
        out = out.substr(0, cut) + "...";
    }
    return out;
}

} // namespace

std::string untrusted(std::string_view text) {
    return text::untrusted(text);
}

std::string utf8_escaped(std::string_view text) {
    return text::valid_utf8(text) ? std::string(text) : text::utf8_escaped(text);
}

std::string json_text(const nlohmann::json& value, int indent) {
    return jsonread::dump(value, indent);
}

std::string cause_summary(BackendCause cause, std::string_view missing) {
    return fill(cause_entry(cause).summary, {{"missing", e(missing)}});
}

std::string missing_library_fix(std::string_view soname) {
    return fill(cause_entry(BackendCause::LibraryDependencyMissing).fix, {{"soname", e(soname)}});
}

CauseText explain(const BackendInfo& info) {
    CauseText out;
    out.cause = info.cause;
    out.details = e_lines(info.error);
    if (info.cause == BackendCause::None)
        return out;
    const CauseEntry& row = cause_entry(info.cause);
    out.severity = row.severity;

    std::vector<std::string> missing, fixes;
    if (info.cause == BackendCause::LibraryDependencyMissing && info.library_report) {
        for (const auto& s : info.library_report->unresolved_with_requester())
            missing.push_back(e(s));
        for (const auto& s : info.library_report->unresolved())
            fixes.push_back(missing_library_fix(s));
    } else if (info.library_report && (info.cause == BackendCause::SymbolVersionMissing ||
                                       info.cause == BackendCause::UndefinedSymbol ||
                                       info.cause == BackendCause::WrongArchitecture ||
                                       info.cause == BackendCause::LibraryTruncated ||
                                       info.cause == BackendCause::LibraryNotLoadable ||
                                       info.cause == BackendCause::StaticTlsExhausted)) {
        // What the static load simulation found missing, each once ("GLIBCXX_3.4.99 from
        // libstdc++.so.6", a symbol, "aarch64 (ELF64)", where the file is cut, the TLS).
        for (const auto& p : info.library_report->load_problems)
            if (p.cause == info.cause &&
                std::find(missing.begin(), missing.end(), e(p.missing)) == missing.end())
                missing.push_back(e(p.missing));
    } else if (info.cause == BackendCause::IsaUnsupported && info.library_report) {
        missing.push_back(isa_level_name(info.library_report->isa_level_needed));
    } else if (info.cause == BackendCause::OptionalDependencyMissing) {
        for (const auto& d : info.dependencies)
            if (!d.found) {
                missing.push_back(e(d.dependency.name));
                fixes.push_back(
                    e(d.dependency.name) + ": " +
                    (d.dependency.hint.empty() ? std::string(row.fix) : e(d.dependency.hint)));
            }
    }
    const auto& caps = info.capabilities;
    const Values values{
        {"library", e(info.library_path)},
        {"manifest", e(info.manifest_path)},
        {"missing", missing.empty() ? std::string("a library") : text::join(missing, ", ")},
        {"shadowed_by", e(info.shadowed_by)},
        {"contract", std::to_string(caps.contract_version)},
        {"core_contract", std::to_string(kContractVersion)},
        {"core_version", std::string(core_version())},
        {"min_core", e(caps.min_core_version.value_or("?"))},
        {"max_core", e(caps.max_core_version.value_or("?"))},
    };
    out.summary = fill(row.summary, values);
    // The short reason where the summary is generic (the cause table's row names no fact of
    // this backend's): an invalid manifest, a failed load or hook.
    const bool specific = row.summary.find("{missing}") != std::string_view::npos;
    if (!specific && (info.state == BackendState::Invalid || info.state == BackendState::Failed)) {
        out.reason = first_clause(info, CauseText::kShortReasonChars);
        if (out.reason.empty() || out.summary.find(out.reason) != std::string::npos)
            out.reason.clear();
    }
    if (info.cause == BackendCause::OptionalDependencyMissing) {
        // The stored message repeats the summary and the fixes; what the checks found is
        // the detail.
        std::vector<std::string> found;
        for (const auto& d : info.dependencies)
            if (!d.found && !d.detail.empty())
                found.push_back(e(d.dependency.name) + ": " + e(d.detail));
        out.details = text::join(found, "\n");
    }
    if (!fixes.empty())
        out.fix = text::join(fixes, "\n");
    else if (info.cause == BackendCause::LibraryDependencyMissing)
        out.fix = fill(row.fix, {{"soname", "the missing library"}});
    else
        out.fix = fill(row.fix, values);
    return out;
}

json summary_json(const BackendInfo& info) {
    return {{"name", info.name},
            {"source", std::string(to_string(info.source))},
            {"tags", info.tags},
            {"available", info.is_available()},
            {"missing_deps", info.missing_dependencies()},
            {"state", std::string(to_string(info.state))},
            {"cause", info.cause},
            {"error", info.error},
            {"description", info.description},
            {"version", info.version}};
}

json detail_json(const BackendInfo& info) {
    json j = summary_json(info);
    const auto& caps = info.capabilities;
    j["capabilities"] = {{"contract_version", caps.contract_version},
                         {"min_core_version", optional_version(caps.min_core_version)},
                         {"max_core_version", optional_version(caps.max_core_version)}};
    j["dependencies"] = info.dependencies;
    j["kernels"] = json::array();
    for (const auto& c : info.declared_kernels)
        j["kernels"].push_back(cell_json(c));
    j["components"] = json::array();
    for (const auto& c : info.declared_components)
        j["components"].push_back(cell_json(c));
    j["diagnostics"] = info.diagnostics;
    j["manifest_path"] = info.manifest_path;
    j["library_path"] = info.library_path;
    j["shadowed_by"] = info.shadowed_by;
    // Unknown manifest keys are echoed up to a size: `show --json` stays proportional to
    // what it shows, whatever a manifest holds.
    constexpr std::size_t kMaxExtraBytes = 16 << 10;
    if (const auto bytes = info.extra.dump().size(); bytes > kMaxExtraBytes) {
        j["extra"] = json::object();
        j["extra_omitted"] = std::to_string(bytes) + " bytes of unknown manifest keys, more than " +
                             std::to_string(kMaxExtraBytes) + ", not shown; they are in " +
                             info.manifest_path;
    } else {
        j["extra"] = info.extra;
    }
    if (info.library_report)
        j["library_dependencies"] = *info.library_report;
    return j;
}

std::string summary_line(const BackendInfo& info) {
    std::string out = e(info.name) + " (" + std::string(to_string(info.source)) +
                      "): " + std::string(to_string(info.state));
    if (info.cause != BackendCause::None)
        out += " [" + std::string(to_string(info.cause)) + "]";
    if (const auto why = explain(info); !why.summary.empty())
        out += " - " + why.summary;
    else if (!info.error.empty())
        out += " - " + e(info.error);
    return out;
}

std::string render_text(const BackendInfo& info) {
    std::ostringstream out;
    out << e(info.name) << "  (" << to_string(info.source) << ", " << to_string(info.state)
        << ")\n";
    if (!info.description.empty())
        out << "  " << e(info.description) << "\n";
    if (!info.version.empty())
        out << "  version:          " << e(info.version) << "\n";
    out << "  tags:             " << (info.tags.empty() ? "-" : e(text::join(info.tags, ", ")))
        << "\n";
    const auto& caps = info.capabilities;
    out << "  contract version: " << caps.contract_version << "\n";
    out << "  core versions:    " << e(caps.min_core_version.value_or("any")) << " .. "
        << e(caps.max_core_version.value_or("any")) << "\n";
    if (!info.manifest_path.empty())
        out << "  manifest:         " << e(info.manifest_path) << "\n";
    if (!info.library_path.empty())
        out << "  library:          " << e(info.library_path) << "\n";
    if (!info.shadowed_by.empty())
        out << "  shadowed by:      " << e(info.shadowed_by) << "\n";
    out << "\nDependencies:\n";
    if (info.dependencies.empty())
        out << "  (none declared)\n";
    for (const auto& d : info.dependencies) {
        out << "  [" << (d.found ? "found  " : "MISSING") << "] " << e(d.dependency.name) << " ("
            << to_string(d.dependency.kind) << ")";
        if (d.found)
            out << " at " << e(d.location);
        else
            out << ": " << e(d.detail)
                << (d.dependency.hint.empty() ? ""
                                              : "\n             install: " + e(d.dependency.hint));
        out << "\n";
    }
    if (info.library_report) {
        const auto& report = *info.library_report;
        out << "\nLibrary dependencies (resolved like the dynamic loader, without loading):\n";
        if (!report.dependencies_read)
            out << "  " << kNotReadByLoader << "\n";
        else if (!report.readable)
            out << "  cannot read " << e(info.library_path) << ": " << e(report.error) << "\n";
        else if (report.dependencies.empty())
            out << "  (none)\n";
        else {
            std::istringstream lines(e_lines(report.to_text()));
            for (std::string line; std::getline(lines, line);)
                out << "  " << line << "\n";
        }
        for (const auto& missing : report.unresolved())
            out << "  MISSING: " << e(missing)
                << " (nothing on the loader's search path provides it)\n";
    }
    out << "\nKernels (" << info.declared_kernels.size() << "):\n";
    for (const auto& c : info.declared_kernels)
        out << "  " << e(TupleKey(c.key).to_string()) << "  workspace " << c.workspace_bytes
            << " B\n";
    if (!info.declared_components.empty()) {
        out << "\nComponents (" << info.declared_components.size() << "):\n";
        for (const auto& c : info.declared_components)
            out << "  " << e(TupleKey(c.key).to_string()) << "\n";
    }
    if (!info.diagnostics.empty()) {
        out << "\nDiagnostics:\n";
        for (const auto& d : info.diagnostics)
            out << "  - " << e(d) << "\n";
    }
    if (const auto why = explain(info); !why.empty()) {
        out << "\nProblem (" << to_string(info.cause) << "): " << why.summary << "\n";
        std::istringstream fixes(why.fix);
        for (std::string line; std::getline(fixes, line);)
            out << "  fix: " << line << "\n";
        if (!why.details.empty() && why.details != why.summary) {
            out << "  details:\n";
            std::istringstream lines(why.details);
            for (std::string line; std::getline(lines, line);)
                out << "    " << line << "\n";
        }
    }
    return out.str();
}

} // namespace switchyard
