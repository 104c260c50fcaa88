// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/dependencies.h>
#include <switchyard/registry/backendinfoformat.h>

#include "util/textutil.h"

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

} // namespace

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
    j["extra"] = info.extra;
    if (info.library_report)
        j["library_dependencies"] = *info.library_report;
    return j;
}

std::string summary_line(const BackendInfo& info) {
    std::string out = info.name + " (" + std::string(to_string(info.source)) +
                      "): " + std::string(to_string(info.state));
    if (info.cause != BackendCause::None)
        out += " [" + std::string(to_string(info.cause)) + "]";
    if (!info.error.empty())
        out += " - " + info.error;
    return out;
}

std::string render_text(const BackendInfo& info) {
    std::ostringstream out;
    out << info.name << "  (" << to_string(info.source) << ", " << to_string(info.state) << ")\n";
    if (!info.description.empty())
        out << "  " << info.description << "\n";
    if (!info.version.empty())
        out << "  version:          " << info.version << "\n";
    out << "  tags:             " << (info.tags.empty() ? "-" : text::join(info.tags, ", "))
        << "\n";
    const auto& caps = info.capabilities;
    out << "  contract version: " << caps.contract_version << "\n";
    out << "  core versions:    " << caps.min_core_version.value_or("any") << " .. "
        << caps.max_core_version.value_or("any") << "\n";
    if (!info.manifest_path.empty())
        out << "  manifest:         " << info.manifest_path << "\n";
    if (!info.library_path.empty())
        out << "  library:          " << info.library_path << "\n";
    if (!info.shadowed_by.empty())
        out << "  shadowed by:      " << info.shadowed_by << "\n";
    out << "\nDependencies:\n";
    if (info.dependencies.empty())
        out << "  (none declared)\n";
    for (const auto& d : info.dependencies) {
        out << "  [" << (d.found ? "found  " : "MISSING") << "] " << d.dependency.name << " ("
            << to_string(d.dependency.kind) << ")";
        if (d.found)
            out << " at " << d.location;
        else
            out << ": " << d.detail
                << (d.dependency.hint.empty() ? ""
                                              : "\n             install: " + d.dependency.hint);
        out << "\n";
    }
    if (info.library_report) {
        const auto& report = *info.library_report;
        out << "\nLibrary dependencies (resolved like the dynamic loader, without loading):\n";
        if (!report.readable)
            out << "  cannot read " << info.library_path << ": " << report.error << "\n";
        else if (report.dependencies.empty())
            out << "  (none)\n";
        else {
            std::istringstream lines(report.to_text());
            for (std::string line; std::getline(lines, line);)
                out << "  " << line << "\n";
        }
        for (const auto& missing : report.unresolved())
            out << "  MISSING: " << missing
                << " (nothing on the loader's search path provides it)\n";
    }
    out << "\nKernels (" << info.declared_kernels.size() << "):\n";
    for (const auto& c : info.declared_kernels)
        out << "  " << TupleKey(c.key).to_string() << "  workspace " << c.workspace_bytes << " B\n";
    if (!info.declared_components.empty()) {
        out << "\nComponents (" << info.declared_components.size() << "):\n";
        for (const auto& c : info.declared_components)
            out << "  " << TupleKey(c.key).to_string() << "\n";
    }
    if (!info.diagnostics.empty()) {
        out << "\nDiagnostics:\n";
        for (const auto& d : info.diagnostics)
            out << "  - " << d << "\n";
    }
    if (!info.error.empty())
        out << "\nProblem (" << to_string(info.cause) << "):\n  " << info.error << "\n";
    return out.str();
}

} // namespace switchyard
