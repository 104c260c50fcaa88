// SPDX-License-Identifier: MIT
#include <switchyard/plugins/manifest.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <set>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace switchyard {
namespace {

namespace k = manifest_keys;
using json = nlohmann::json;

std::string type_name(const json& value) {
    switch (value.type()) {
    case json::value_t::null:
        return "null";
    case json::value_t::boolean:
        return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
        return "integer";
    case json::value_t::number_float:
        return "number";
    case json::value_t::string:
        return "string";
    case json::value_t::array:
        return "array";
    case json::value_t::object:
        return "object";
    default:
        return "value";
    }
}

// Collects errors and unknown keys while walking the document.
class Reader {
public:
    explicit Reader(PluginManifest& m) : m_m(m) {}

    void wrong_type(const std::string& key, const char* expected, const json& got) {
        m_m.errors.push_back("key '" + key + "': expected " + expected + ", got " + type_name(got));
    }
    void missing(const std::string& key) {
        m_m.errors.push_back("key '" + key + "' is missing (required)");
    }
    void invalid(const std::string& key, const std::string& why) {
        m_m.errors.push_back("key '" + key + "': " + why);
    }

    void keep(const std::string& path, const json& value) { m_m.extra[path] = value; }

    // Unknown keys are kept, never rejected.
    void keep_unknown(const json& object, const std::string& prefix,
                      std::initializer_list<const char*> known) {
        for (auto it = object.begin(); it != object.end(); ++it) {
            bool is_known = false;
            for (const char* name : known)
                if (it.key() == name)
                    is_known = true;
            if (!is_known)
                m_m.extra[prefix.empty() ? it.key() : prefix + "." + it.key()] = it.value();
        }
    }

    // The member `key` when present and of the right type; records "missing" (when
    // required) or "wrong type" otherwise. Absent and optional: nullptr, the default stays.
    template <class IsType>
    const json* typed(const json& object, const char* key, const std::string& path, bool required,
                      IsType is_type, const char* expected) {
        auto it = object.find(key);
        if (it == object.end()) {
            if (required)
                missing(path);
            return nullptr;
        }
        if (!is_type(*it)) {
            wrong_type(path, expected, *it);
            return nullptr;
        }
        return &*it;
    }

    bool string(const json& object, const char* key, const std::string& path, std::string& out,
                bool required) {
        const json* v = typed(object, key, path, required, [](const json& j) { return j.is_string(); }, "a string");
        if (v)
            out = v->get<std::string>();
        return v != nullptr;
    }

    bool string_list(const json& object, const char* key, const std::string& path,
                     std::vector<std::string>& out) {
        auto it = object.find(key);
        if (it == object.end())
            return false;
        if (!it->is_array()) {
            wrong_type(path, "an array of strings", *it);
            return false;
        }
        for (std::size_t i = 0; i < it->size(); ++i) {
            const auto& item = (*it)[i];
            if (!item.is_string()) {
                wrong_type(path + "[" + std::to_string(i) + "]", "a string", item);
                continue;
            }
            out.push_back(item.get<std::string>());
        }
        return true;
    }

    std::optional<std::string> optional_version(const json& object, const char* key,
                                                const std::string& path) {
        auto it = object.find(key);
        if (it == object.end() || it->is_null())
            return std::nullopt;
        if (!it->is_string()) {
            wrong_type(path, "a version string or null", *it);
            return std::nullopt;
        }
        return it->get<std::string>();
    }

    bool integer(const json& object, const char* key, const std::string& path, long long& out,
                 bool required) {
        const json* v =
            typed(object, key, path, required, [](const json& j) { return j.is_number_integer(); }, "an integer");
        if (v)
            out = v->get<long long>();
        return v != nullptr;
    }

    const json* array_of_objects(const json& object, const char* key, const std::string& path) {
        auto it = object.find(key);
        if (it == object.end())
            return nullptr;
        if (!it->is_array()) {
            wrong_type(path, "an array of objects", *it);
            return nullptr;
        }
        return &*it;
    }

private:
    PluginManifest& m_m;
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
        r.optional_version(caps, k::kMinCoreVersion, p + "." + k::kMinCoreVersion);
    m.capabilities.max_core_version =
        r.optional_version(caps, k::kMaxCoreVersion, p + "." + k::kMaxCoreVersion);
    const std::string deps_path = p + "." + k::kOptionalDeps;
    if (const json* deps = r.array_of_objects(caps, k::kOptionalDeps, deps_path)) {
        for (std::size_t i = 0; i < deps->size(); ++i) {
            const auto& d = (*deps)[i];
            const std::string at = deps_path + "[" + std::to_string(i) + "]";
            if (!d.is_object()) {
                r.wrong_type(at, "an object", d);
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

void read_cells(Reader& r, const json& root, const char* key,
                std::initializer_list<const char*> key_fields, bool has_workspace,
                std::vector<DeclaredCell>& out) {
    const json* cells = r.array_of_objects(root, key, key);
    if (!cells)
        return;
    for (std::size_t i = 0; i < cells->size(); ++i) {
        const auto& c = (*cells)[i];
        const std::string at = std::string(key) + "[" + std::to_string(i) + "]";
        if (!c.is_object()) {
            r.wrong_type(at, "an object", c);
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
}

// 1-based line and column of a byte offset, for JSON syntax errors.
std::string position_of(std::string_view text, std::size_t byte) {
    std::size_t line = 1;
    std::size_t column = 1;
    for (std::size_t i = 0; i < byte && i < text.size(); ++i) {
        if (text[i] == '\n') {
            ++line;
            column = 1;
        } else {
            ++column;
        }
    }
    return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

} // namespace

PluginManifest PluginManifest::parse(std::string_view text) {
    PluginManifest m;
    json root;
    try {
        root = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        // e.byte is 1-based and points just past the offending character.
        const std::size_t at = e.byte > 0 ? e.byte - 1 : 0;
        std::string what = e.what();
        if (auto colon = what.rfind(": "); colon != std::string::npos)
            what = what.substr(colon + 2);
        m.errors.push_back("not valid JSON at " + position_of(text, at) + ": " + what);
        return m;
    }
    if (!root.is_object()) {
        m.errors.push_back("expected a JSON object at the top level, got " + type_name(root));
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
        if (m.library.empty() || m.library.find('/') != std::string::npos || m.library == "." ||
            m.library == "..")
            r.invalid(k::kLibrary,
                      "must be a file name in the manifest's folder, got '" + m.library + "'");
    }
    r.string_list(root, k::kTags, k::kTags, m.tags);
    if (auto it = root.find(k::kCapabilities); it != root.end()) {
        if (it->is_object())
            read_capabilities(r, *it, m);
        else
            r.wrong_type(k::kCapabilities, "an object", *it);
    }
    read_cells(r, root, k::kKernels, {k::kOp, k::kDevice, k::kArch}, true, m.kernels);
    read_cells(r, root, k::kComponents, {k::kKind, k::kDevice}, false, m.components);
    return m;
}

PluginManifest PluginManifest::read(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        PluginManifest m;
        m.errors.push_back("cannot read " + path + ": " + std::strerror(errno));
        return m;
    }
    std::string text;
    struct stat st {};
    if (::fstat(fd, &st) == 0 && st.st_size > 0)
        text.reserve(std::size_t(st.st_size));
    char buf[16384];
    ssize_t n = 0;
    while ((n = ::read(fd, buf, sizeof buf)) > 0)
        text.append(buf, std::size_t(n));
    const int read_errno = errno;
    ::close(fd);
    if (n < 0) {
        PluginManifest m;
        m.errors.push_back("cannot read " + path + ": " + std::strerror(read_errno));
        return m;
    }
    return parse(text);
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
