// SPDX-License-Identifier: MIT
#include <switchyard/registry/codeidentity.h>

#include <switchyard/diagnosis/buildid.h>
#include <switchyard/sdk/version.h>

namespace switchyard {

namespace {

std::string short_id(const std::string& id) {
    return id.empty() ? std::string("none") : id.substr(0, 12);
}

} // namespace

std::string CodeIdentity::text() const {
    std::string out = backend;
    if (!version.empty())
        out += " " + version;
    out += build_id.empty() ? ", no build ID" : ", build " + short_id(build_id);
    return out;
}

std::string CodeIdentity::difference(const CodeIdentity& now) const {
    if (backend != now.backend)
        return "its backend is '" + now.backend + "' now, '" + backend + "' when tuned";
    if (version != now.version)
        return backend + "'s version is " + (now.version.empty() ? "unknown" : now.version) +
               " now, " + (version.empty() ? "unknown" : version) + " when tuned";
    if (build_id != now.build_id)
        return backend + "'s library was rebuilt (build " + short_id(now.build_id) + " now, " +
               short_id(build_id) + " when tuned)";
    return {};
}

CodeIdentity code_identity(BackendRegistry& registry, const KernelCell& cell) {
    CodeIdentity id;
    id.backend = cell.backend;
    if (cell.source != CellSource::Plugin) {
        // Built-in and registered cells are the core's code (or the application's that
        // linked it): the core's build says which.
        id.version = std::string(core_version());
        id.build_id = core_build_id();
        return id;
    }
    try {
        const auto info = registry.info(cell.backend);
        id.version = info.version;
        if (!info.library_path.empty())
            id.build_id = file_build_id(info.library_path);
    } catch (const std::exception&) {
        // A backend the registry no longer knows: its identity is unknown, and no entry
        // that names a known one matches it.
    }
    return id;
}

} // namespace switchyard
