// SPDX-License-Identifier: MIT
#include <switchyard/plugins/manifest.h>

#include <switchyard/hardware/devicekind.h>
#include <switchyard/sdk/version.h>

#include "util/jsonread.h"
#include "util/safefile.h"

#include <algorithm>
#include <array>
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

// Why `kind` cannot be a provided device kind; "" when it can.
std::string device_kind_problem(const std::string& kind) {
    if (kind.empty())
        return "a device kind must not be empty";
    if (device_kind(kind) == DeviceKind::Cpu)
        return "'cpu' is built in; a plugin cannot provide it (list only the kinds whose devices "
               "its library adds, e.g. [\"cuda\"])";
    if (kind.find_first_of(":\0", 0, 2) != std::string::npos)
        return "'" + kind + "' is not a device kind (a kind such as \"cuda\", not a device id)";
    return {};
}

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

// The common manifest read straight from its text, without a DOM: every key known, of the
// right type and valid, none twice, within the limits. read() returns false for anything
// else, which parse_manifest() then reads the collecting way, naming every problem (so what
// a manifest with a problem says never depends on this reader).
class PlainReader {
public:
    PlainReader(std::string_view text, const jsonread::ParseLimits& limits) : m_in(text, limits) {}

    bool read(PluginManifest& m) {
        if (!m_in.no_bom())
            return false;
        static constexpr std::array<const char*, 10> kRoot = {
            k::kSchema, k::kName,         k::kVersion, k::kDescription, k::kLibrary,
            k::kTags,   k::kCapabilities, k::kKernels, k::kComponents,  k::kProvidesDevices};
        std::uint32_t seen = 0;
        const bool ok = object(kRoot, seen, [&](std::size_t key) {
            switch (key) {
            case 0: {
                std::int64_t schema = 0;
                if (!m_in.integer(schema) || schema < 1 || schema > kManifestSchema)
                    return false;
                m.schema = int(schema);
                return true;
            }
            case 1:
                return m_in.string_value(m.name) && valid_name(m.name);
            case 2:
                return m_in.string_value(m.version);
            case 3:
                return m_in.string_value(m.description);
            case 4:
                return m_in.string_value(m.library) && valid_library(m.library);
            case 5:
                return strings(m.tags);
            case 6:
                return capabilities(m.capabilities);
            case 7:
                return cells({k::kOp, k::kDevice, k::kArch}, true, m.kernels);
            case 8:
                return cells({k::kKind, k::kDevice}, false, m.components);
            default: {
                auto& kinds = m.provides_devices.emplace();
                return strings(kinds) && std::all_of(kinds.begin(), kinds.end(), [](const auto& k) {
                           return device_kind_problem(k).empty();
                       });
            }
            }
        });
        constexpr std::uint32_t kRequired = 1u << 0 | 1u << 1 | 1u << 2 | 1u << 4;
        return ok && (seen & kRequired) == kRequired &&
               m.kernels.size() + m.components.size() <= kMaxManifestCells && m_in.at_end();
    }

    static bool valid_library(const std::string& library) {
        return library.find('\0') == std::string::npos && !library.empty() &&
               library.find('/') == std::string::npos && library != "." && library != "..";
    }

private:
    // An object whose keys are all in `names` (at most once each): `member(i)` reads the
    // value of names[i]; `seen` gets bit i for each key read.
    template <std::size_t N, class Member>
    bool object(const std::array<const char*, N>& names, std::uint32_t& seen, Member member) {
        static_assert(N <= 32);
        if (!m_in.consume('{') || !m_in.count_value())
            return false;
        if (m_in.consume('}'))
            return true;
        do {
            if (!m_in.key(m_key))
                return false;
            std::size_t i = 0;
            while (i < N && m_key != names[i])
                ++i;
            if (i == N || (seen & (1u << i)))
                return false; // an unknown key (kept in `extra`) or a duplicate
            seen |= 1u << i;
            if (!member(i))
                return false;
        } while (m_in.consume(','));
        return m_in.consume('}');
    }

    template <class Item> bool array(Item item) {
        if (!m_in.consume('[') || !m_in.count_value())
            return false;
        if (m_in.consume(']'))
            return true;
        do {
            if (!item())
                return false;
        } while (m_in.consume(','));
        return m_in.consume(']');
    }

    bool strings(std::vector<std::string>& out) {
        return array([&] { return m_in.string_value(out.emplace_back()); });
    }

    // A null or a core version bound that parses.
    bool core_version(std::optional<std::string>& out) {
        if (m_in.null())
            return true;
        std::string v;
        if (!m_in.string_value(v) || !parse_version(v))
            return false;
        out = std::move(v);
        return true;
    }

    bool capabilities(BackendCapabilities& caps) {
        static constexpr std::array<const char*, 4> kCaps = {
            k::kContractVersion, k::kMinCoreVersion, k::kMaxCoreVersion, k::kOptionalDeps};
        std::uint32_t seen = 0;
        return object(kCaps, seen, [&](std::size_t key) {
            switch (key) {
            case 0: {
                std::int64_t contract = 0;
                if (!m_in.integer(contract) || contract < 1 || contract > 1000000)
                    return false;
                caps.contract_version = int(contract);
                return true;
            }
            case 1:
                return core_version(caps.min_core_version);
            case 2:
                return core_version(caps.max_core_version);
            default:
                return array([&] { return dependency(caps.optional_deps.emplace_back()); });
            }
        });
    }

    bool dependency(Dependency& dep) {
        static constexpr std::array<const char*, 3> kDep = {k::kDepName, k::kDepKind, k::kDepHint};
        std::uint32_t seen = 0;
        const bool ok = object(kDep, seen, [&](std::size_t key) {
            switch (key) {
            case 0:
                return m_in.string_value(dep.name) && !dep.name.empty() &&
                       dep.name.find('\0') == std::string::npos;
            case 1: {
                const auto kind = m_in.string_value(m_value) ? dependency_kind_from_string(m_value)
                                                             : std::nullopt;
                if (kind)
                    dep.kind = *kind;
                return kind.has_value();
            }
            default:
                return m_in.string_value(dep.hint);
            }
        });
        return ok && (seen & 3u) == 3u; // name and kind are required
    }

    // kernels or components: every cell a well-formed one, as read_plain_cell() reads it.
    bool cells(std::initializer_list<const char*> key_fields, bool has_workspace,
               DeclaredCells& declared) {
        const std::size_t n = key_fields.size();
        // The key fields, variant, workspace_bytes; the slots left hold variant again, which
        // the first one always matches.
        std::array<const char*, 5> names{};
        names.fill(k::kVariant);
        std::copy(key_fields.begin(), key_fields.end(), names.begin());
        if (has_workspace)
            names[n + 1] = k::kWorkspaceBytes;
        std::vector<DeclaredCell> out;
        const bool ok = array([&] {
            DeclaredCell& cell = out.emplace_back();
            cell.key.resize(n + 1);
            cell.key[n] = "default";
            std::uint32_t seen = 0;
            const bool read = object(names, seen, [&](std::size_t key) {
                if (key <= n)
                    return m_in.string_value(cell.key[key]);
                std::int64_t bytes = 0;
                if (!m_in.integer(bytes) || bytes < 0)
                    return false;
                cell.workspace_bytes = bytes;
                return true;
            });
            const std::uint32_t required = (1u << n) - 1;
            return read && (seen & required) == required;
        });
        if (ok)
            declared = DeclaredCells(std::move(out));
        return ok;
    }

    jsonread::FastScanner m_in;
    std::string m_key;   // the key being read
    std::string m_value; // a string value read and not kept
};

} // namespace

namespace {

jsonread::ParseLimits manifest_limits() {
    jsonread::ParseLimits limits;
    limits.max_depth = kMaxManifestDepth;
    limits.max_values = kMaxManifestValues;
    return limits;
}

PluginManifest parse_manifest(std::string_view text, bool plain_first) {
    PluginManifest m;
    if (text.size() > kMaxManifestBytes) {
        m.errors.push_back(std::to_string(text.size()) + " bytes is larger than the " +
                           safefile::size_text(kMaxManifestBytes) + " a manifest may have");
        return m;
    }
    const jsonread::ParseLimits limits = manifest_limits();
    if (plain_first) {
        if (PlainReader(text, limits).read(m))
            return m;
        m = PluginManifest();
    }
    json root;
    try {
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
                    k::kCapabilities, k::kKernels, k::kComponents, k::kProvidesDevices});
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
        else if (!PlainReader::valid_library(m.library))
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
    if (root.contains(k::kProvidesDevices)) {
        std::vector<std::string> kinds;
        if (r.check().strings(root, k::kProvidesDevices, k::kProvidesDevices, kinds)) {
            for (std::size_t i = 0; i < kinds.size(); ++i)
                if (const auto why = device_kind_problem(kinds[i]); !why.empty())
                    r.invalid(std::string(k::kProvidesDevices) + "[" + std::to_string(i) + "]",
                              why);
            m.provides_devices = std::move(kinds);
        }
    }
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
        return parse_manifest(text, true);
    } catch (const std::exception& e) {
        // Whatever else goes wrong makes this manifest invalid, never the discovery.
        PluginManifest m;
        m.errors.push_back(std::string("cannot read the manifest: ") + e.what());
        return m;
    }
}

PluginManifest detail::parse_manifest_general(std::string_view text) {
    try {
        return parse_manifest(text, false);
    } catch (const std::exception& e) {
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
    if (provides_devices)
        out[k::kProvidesDevices] = *provides_devices;
    for (auto it = extra.begin(); it != extra.end(); ++it)
        out[it.key()] = it.value();
    return out;
}

bool is_manifest_file_name(std::string_view file_name) noexcept {
    return file_name.size() > kManifestSuffix.size() && file_name.ends_with(kManifestSuffix);
}

} // namespace switchyard
