// SPDX-License-Identifier: MIT
#include <switchyard/plugins/manifest.h>
#include <switchyard/sdk/version.h>

#include "util/jsonread.h"
#include "util/safefile.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <limits>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace switchyard {
namespace {

namespace k = manifest_keys;
using json = nlohmann::json;

using jsonread::Kind;

// The manifest's reader: the shared JSON reader collecting every problem, plus the
// unknown keys it keeps (with dotted paths) in `extra`.
class Reader {
public:
    explicit Reader(PluginManifest& m) : m_m(m) {}

    jsonread::Collector& check() { return m_check; }
    void invalid(const std::string& key, const std::string& why) { m_check.add(key, why); }
    void wrong_type(const std::string& key, Kind kind, const json& got) {
        m_check.wrong_type(key, kind, got);
    }
    void keep(const std::string& path, const json& value) { m_m.extra[path] = value; }
    void keep_unknown(const json& object, const std::string& prefix,
                      std::initializer_list<std::string_view> known) {
        for (const auto& [path, value] : jsonread::unknown_members(object, prefix, known))
            keep(path, *value);
    }

    bool string(const json& o, const char* key, const std::string& path, std::string& out,
                bool required) {
        return m_check.string(o, key, path, out, required);
    }
    bool integer(const json& o, const char* key, const std::string& path, long long& out,
                 bool required) {
        return m_check.integer(o, key, path, out, required);
    }
    std::optional<std::string> optional_version(const json& o, const char* key,
                                                const std::string& path) {
        return m_check.optional_string(o, key, path, "a version string or null");
    }
    // A core version bound: null/absent, or MAJOR.MINOR.PATCH (a suffix such as "rc1" may
    // follow) whose numbers fit; anything else is an invalid key.
    std::optional<std::string> core_version(const json& o, const char* key,
                                            const std::string& path) {
        auto v = optional_version(o, key, path);
        if (v && !parse_version(*v)) {
            invalid(path, "'" + *v +
                              "' is not a version MAJOR.MINOR.PATCH (three numbers, each at most " +
                              std::to_string(std::numeric_limits<long long>::max()) + ")");
            return std::nullopt;
        }
        return v;
    }
    const json* array_of_objects(const json& o, const char* key, const std::string& path) {
        return m_check.member(o, key, path, Kind::ArrayOfObjects, false);
    }

    // The problems as the manifest's error strings, in the order they were found.
    void finish() {
        for (const auto& p : m_check.problems())
            m_m.errors.push_back(p.missing ? "key '" + p.path + "' is missing (required)"
                                           : "key '" + p.path + "': " + p.message);
    }

private:
    PluginManifest& m_m;
    jsonread::Collector m_check;
};

bool valid_name(const std::string& name) {
    if (name.empty() || !std::isalnum(static_cast<unsigned char>(name[0])))
        return false;
    for (char c : name)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
            return false;
    return true;
}

void read_capabilities(Reader& r, const json& caps, PluginManifest& m) {
    const std::string p = k::kCapabilities;
    r.keep_unknown(caps, p,
                   {k::kContractVersion, k::kMinCoreVersion, k::kMaxCoreVersion, k::kOptionalDeps});
    long long contract = kContractVersion;
    if (r.integer(caps, k::kContractVersion, p + "." + k::kContractVersion, contract, false)) {
        if (contract < 1 || contract > 1000000)
            r.invalid(p + "." + k::kContractVersion,
                      "must be a positive revision, got " + std::to_string(contract));
        else
            m.capabilities.contract_version = int(contract);
    }
    m.capabilities.min_core_version =
        r.core_version(caps, k::kMinCoreVersion, p + "." + k::kMinCoreVersion);
    m.capabilities.max_core_version =
        r.core_version(caps, k::kMaxCoreVersion, p + "." + k::kMaxCoreVersion);
    const std::string deps_path = p + "." + k::kOptionalDeps;
    if (const json* deps = r.array_of_objects(caps, k::kOptionalDeps, deps_path)) {
        for (std::size_t i = 0; i < deps->size(); ++i) {
            const auto& d = (*deps)[i];
            const std::string at = deps_path + "[" + std::to_string(i) + "]";
            if (!d.is_object()) {
                r.wrong_type(at, Kind::Object, d);
                continue;
            }
            r.keep_unknown(d, at, {k::kDepName, k::kDepKind, k::kDepHint});
            Dependency dep;
            std::string kind;
            const bool has_name = r.string(d, k::kDepName, at + "." + k::kDepName, dep.name, true);
            const bool has_kind = r.string(d, k::kDepKind, at + "." + k::kDepKind, kind, true);
            r.string(d, k::kDepHint, at + "." + k::kDepHint, dep.hint, false);
            if (has_name && dep.name.empty())
                r.invalid(at + "." + k::kDepName, "must not be empty");
            else if (has_name && dep.name.find('\0') != std::string::npos)
                r.invalid(at + "." + k::kDepName, "contains a NUL character");
            if (has_kind) {
                if (auto parsed = dependency_kind_from_string(kind))
                    dep.kind = *parsed;
                else
                    r.invalid(at + "." + k::kDepKind,
                              "unknown dependency kind '" + kind +
                                  "' (expected library, file, executable or env)");
            }
            m.capabilities.optional_deps.push_back(std::move(dep));
        }
    }
}

// A well-formed cell read in one pass over its members, without building key paths: every
// member known and of the right type, every key field present. Returns false (and leaves
// `cell` to be thrown away) for anything else, which read_cells() then reads the collecting
// way, naming each problem.
bool read_plain_cell(const json& c, std::initializer_list<const char*> key_fields,
                     bool has_workspace, DeclaredCell& cell) {
    if (!c.is_object())
        return false;
    const std::size_t n = key_fields.size();
    cell.key.assign(n + 1, std::string());
    cell.key[n] = "default";
    std::size_t found = 0;
    for (auto it = c.begin(); it != c.end(); ++it) {
        const std::string& name = it.key();
        const json& value = it.value();
        if (has_workspace && name == k::kWorkspaceBytes) {
            if (!value.is_number_integer() || value.get<long long>() < 0)
                return false;
            cell.workspace_bytes = value.get<long long>();
            continue;
        }
        if (!value.is_string())
            return false;
        std::size_t slot = 0;
        for (const char* field : key_fields) {
            if (name == field)
                break;
            ++slot;
        }
        if (slot == n && name != k::kVariant)
            return false; // an unknown key: kept in `extra` by the collecting way
        if (slot < n)
            ++found;
        cell.key[slot] = value.get_ref<const std::string&>();
    }
    return found == n;
}

void read_cells(Reader& r, const json& root, const char* key,
                std::initializer_list<const char*> key_fields, bool has_workspace,
                DeclaredCells& declared) {
    const json* cells = r.array_of_objects(root, key, key);
    if (!cells)
        return;
    std::vector<DeclaredCell> out;
    out.reserve(cells->size());
    for (std::size_t i = 0; i < cells->size(); ++i) {
        const auto& c = (*cells)[i];
        if (DeclaredCell plain; read_plain_cell(c, key_fields, has_workspace, plain)) {
            out.push_back(std::move(plain));
            continue;
        }
        const std::string at = std::string(key) + "[" + std::to_string(i) + "]";
        if (!c.is_object()) {
            r.wrong_type(at, Kind::Object, c);
            continue;
        }
        std::vector<const char*> known(key_fields);
        known.push_back(k::kVariant);
        if (has_workspace)
            known.push_back(k::kWorkspaceBytes);
        DeclaredCell cell;
        for (const char* field : key_fields) {
            std::string value;
            r.string(c, field, at + "." + field, value, true);
            cell.key.push_back(std::move(value));
        }
        std::string variant = "default";
        r.string(c, k::kVariant, at + "." + k::kVariant, variant, false);
        cell.key.push_back(std::move(variant));
        if (has_workspace) {
            long long bytes = 0;
            if (r.integer(c, k::kWorkspaceBytes, at + "." + k::kWorkspaceBytes, bytes, false)) {
                if (bytes < 0)
                    r.invalid(at + "." + k::kWorkspaceBytes, "must not be negative");
                else
                    cell.workspace_bytes = bytes;
            }
        }
        for (auto it = c.begin(); it != c.end(); ++it) // unknown keys of the cell are kept
            if (std::none_of(known.begin(), known.end(),
                             [&](const char* n) { return it.key() == n; }))
                r.keep(at + "." + it.key(), it.value());
        out.push_back(std::move(cell));
    }
    declared = DeclaredCells(std::move(out));
}

} // namespace

namespace {

PluginManifest parse_manifest(std::string_view text) {
    PluginManifest m;
    if (text.size() > kMaxManifestBytes) {
        m.errors.push_back(std::to_string(text.size()) + " bytes is larger than the " +
                           safefile::size_text(kMaxManifestBytes) + " a manifest may have");
        return m;
    }
    json root;
    try {
        jsonread::ParseLimits limits;
        limits.max_depth = kMaxManifestDepth;
        limits.max_values = kMaxManifestValues;
        root = jsonread::parse(text, limits);
    } catch (const jsonread::ParseError& e) {
        m.errors.push_back("not valid JSON at " + e.position() + ": " + e.message());
        return m;
    }
    if (!root.is_object()) {
        m.errors.push_back("expected a JSON object at the top level, got " +
                           jsonread::type_name(root));
        return m;
    }
    Reader r(m);
    r.keep_unknown(root, "",
                   {k::kSchema, k::kName, k::kVersion, k::kDescription, k::kLibrary, k::kTags,
                    k::kCapabilities, k::kKernels, k::kComponents});
    long long schema = 0;
    if (r.integer(root, k::kSchema, k::kSchema, schema, true)) {
        if (schema > kManifestSchema)
            r.invalid(k::kSchema, "revision " + std::to_string(schema) +
                                      " is newer than this Switchyard reads (" +
                                      std::to_string(kManifestSchema) + "); upgrade Switchyard");
        else if (schema < 1)
            r.invalid(k::kSchema, "must be " + std::to_string(kManifestSchema) + ", got " +
                                      std::to_string(schema));
        else
            m.schema = int(schema);
    }
    if (r.string(root, k::kName, k::kName, m.name, true) && !valid_name(m.name))
        r.invalid(k::kName, "'" + m.name +
                                "' is not a valid backend name (letters, digits, '-', '_', '.'; "
                                "starting with a letter or digit)");
    r.string(root, k::kVersion, k::kVersion, m.version, true);
    r.string(root, k::kDescription, k::kDescription, m.description, false);
    if (r.string(root, k::kLibrary, k::kLibrary, m.library, true)) {
        if (m.library.find('\0') != std::string::npos)
            r.invalid(k::kLibrary, "contains a NUL character");
        else if (m.library.empty() || m.library.find('/') != std::string::npos ||
                 m.library == "." || m.library == "..")
            r.invalid(k::kLibrary,
                      "must be a file name in the manifest's folder, got '" + m.library + "'");
    }
    r.check().strings(root, k::kTags, k::kTags, m.tags);
    if (auto it = root.find(k::kCapabilities); it != root.end()) {
        if (it->is_object())
            read_capabilities(r, *it, m);
        else
            r.wrong_type(k::kCapabilities, Kind::Object, *it);
    }
    read_cells(r, root, k::kKernels, {k::kOp, k::kDevice, k::kArch}, true, m.kernels);
    read_cells(r, root, k::kComponents, {k::kKind, k::kDevice}, false, m.components);
    if (const auto cells = m.kernels.size() + m.components.size(); cells > kMaxManifestCells)
        r.invalid(k::kKernels, "declares " + std::to_string(cells) +
                                   " kernels and components; a manifest may declare at most " +
                                   std::to_string(kMaxManifestCells));
    r.finish();
    return m;
}

} // namespace

PluginManifest PluginManifest::parse(std::string_view text) {
    try {
        return parse_manifest(text);
    } catch (const std::exception& e) {
        // Whatever else goes wrong makes this manifest invalid, never the discovery.
        PluginManifest m;
        m.errors.push_back(std::string("cannot read the manifest: ") + e.what());
        return m;
    }
}

PluginManifest PluginManifest::read(const std::string& path) {
    try {
        safefile::InputFile in(path, safefile::InputFile::Accept::RegularFile);
        return parse(in.read_all(kMaxManifestBytes, "manifest"));
    } catch (const safefile::Error& e) {
        PluginManifest m;
        m.errors.push_back(e.what());
        return m;
    }
}

nlohmann::json PluginManifest::to_json() const {
    json deps = json::array();
    for (const auto& d : capabilities.optional_deps)
        deps.push_back({{k::kDepName, d.name},
                        {k::kDepKind, std::string(to_string(d.kind))},
                        {k::kDepHint, d.hint}});
    json caps = {{k::kContractVersion, capabilities.contract_version},
                 {k::kMinCoreVersion,
                  capabilities.min_core_version ? json(*capabilities.min_core_version) : json()},
                 {k::kMaxCoreVersion,
                  capabilities.max_core_version ? json(*capabilities.max_core_version) : json()},
                 {k::kOptionalDeps, deps}};
    json kernel_rows = json::array();
    for (const auto& c : kernels)
        if (c.key.size() == 4)
            kernel_rows.push_back({{k::kOp, c.key[0]},
                                   {k::kDevice, c.key[1]},
                                   {k::kArch, c.key[2]},
                                   {k::kVariant, c.key[3]},
                                   {k::kWorkspaceBytes, c.workspace_bytes}});
    json component_rows = json::array();
    for (const auto& c : components)
        if (c.key.size() == 3)
            component_rows.push_back(
                {{k::kKind, c.key[0]}, {k::kDevice, c.key[1]}, {k::kVariant, c.key[2]}});
    json out = {{k::kSchema, schema},
                {k::kName, name},
                {k::kVersion, version},
                {k::kDescription, description},
                {k::kLibrary, library},
                {k::kTags, tags},
                {k::kCapabilities, caps},
                {k::kKernels, kernel_rows},
                {k::kComponents, component_rows}};
    for (auto it = extra.begin(); it != extra.end(); ++it)
        out[it.key()] = it.value();
    return out;
}

bool is_manifest_file_name(std::string_view file_name) noexcept {
    return file_name.size() > kManifestSuffix.size() && file_name.ends_with(kManifestSuffix);
}

} // namespace switchyard
