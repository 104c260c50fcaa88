// SPDX-License-Identifier: MIT
#include <switchyard/profiling/ceilingcache.h>

#include <switchyard/buildinfo.h>
#include <switchyard/diagnosis/buildid.h>
#include <switchyard/hardware/hardware.h>
#include <switchyard/hardware/sdkjson.h>
#include <switchyard/profiling/fingerprint.h>
#include <switchyard/sdk/version.h>

#include "hardware/affinity.h"
#include "util/jsonread.h"
#include "util/safefile.h"
#include "util/sanitizer.h"
#include "util/textutil.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace switchyard {

namespace {

constexpr const char* kCeilingCacheFormat = "switchyard.ceilings";
constexpr const char* kDeviceCacheFormat = "switchyard.device-ceilings";
constexpr int kCeilingCacheFormatVersion = 1;
constexpr std::size_t kCeilingCacheMaxBytes = std::size_t(16) << 20;

std::string local_minutes(std::int64_t unix_seconds) {
    const std::time_t t = std::time_t(unix_seconds);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
    return buf;
}

std::string days_text(double days) {
    char buf[48];
    if (days < 1)
        std::snprintf(buf, sizeof buf, "%.1f hours", days * 24);
    else
        std::snprintf(buf, sizeof buf, "%.1f days", days);
    return buf;
}

// The first leaf where two machine parts differ, as "cpu.microcode (0xa1, now 0xa2)".
std::string first_machine_difference(const nlohmann::json& was, const nlohmann::json& now,
                                     const std::string& path) {
    if (was.is_object() && now.is_object()) {
        for (const auto& [key, value] : now.items()) {
            const auto it = was.find(key);
            const std::string at = path.empty() ? key : path + "." + key;
            if (it == was.end())
                return at + " (not recorded then)";
            if (auto d = first_machine_difference(*it, value, at); !d.empty())
                return d;
        }
        for (const auto& [key, value] : was.items())
            if (!now.contains(key))
                return (path.empty() ? key : path + "." + key) + " (gone now)";
        return {};
    }
    if (was == now)
        return {};
    return path + " (" + (was.is_string() ? was.get<std::string>() : was.dump()) + ", now " +
           (now.is_string() ? now.get<std::string>() : now.dump()) + ")";
}

const nlohmann::json& member(const nlohmann::json& j, const char* key, const char* where) {
    const auto it = j.find(key);
    if (it == j.end())
        throw std::runtime_error(std::string(where) + "." + key + ": missing");
    return *it;
}

std::string string_member(const nlohmann::json& j, const char* key, const char* where) {
    const auto& v = member(j, key, where);
    if (!v.is_string())
        throw std::runtime_error(std::string(where) + "." + key + ": expected a string, got " +
                                 v.type_name());
    return v.get<std::string>();
}

std::string file_name_part(const std::string& text) {
    std::string out;
    for (const char c : text)
        out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_')
                   ? c
                   : '_';
    return out.empty() ? std::string("unknown") : out;
}

// Why the cached set's 1-thread ceilings do not fit this process's CPU choice (--pin-cpu,
// SWITCHYARD_PIN_CPU), "" when they do: rows run where their ceilings were measured.
std::string pin_mismatch(int pinned) {
    const int want = detail::measurement_cpu();
    if (want < 0 && pinned >= 0)
        return "its 1-thread ceilings were measured on CPU " + std::to_string(pinned) +
               " and this run is unpinned (--pin-cpu off)";
    if (want >= 0 && pinned < 0)
        return "its 1-thread ceilings were measured unpinned (--pin-cpu off) and this run pins";
    if (pinned >= 0 && detail::measurement_cpu_named() && pinned != want)
        return "its 1-thread ceilings were measured on CPU " + std::to_string(pinned) +
               " and --pin-cpu names CPU " + std::to_string(want);
    if (pinned >= 0 && !detail::process_may_run_on(pinned))
        return "its 1-thread ceilings were measured on CPU " + std::to_string(pinned) +
               ", which this process may not run on";
    return {};
}

nlohmann::json origin_fields(nlohmann::json set, const CeilingSetOrigin& o) {
    set["machine_id"] = o.machine_id;
    set["host"] = o.host;
    set["software"] = o.software;
    set["kernel"] = o.kernel;
    return set;
}

} // namespace

CeilingSetOrigin CeilingSetOrigin::here() {
    CeilingSetOrigin o;
    auto machine = machine_fingerprint()["machine"];
    machine.erase("gpus"); // the CPU's ceilings do not depend on them
    o.machine_id = fingerprint_id(machine);
    o.machine = std::move(machine);
    const auto host = host_info();
    o.host = host.hostname;
    o.kernel = host.os;
    o.software = "switchyard " + std::string(core_version()) + " (" + std::string(core_git_hash()) +
                 ", " + std::string(core_build_type()) + ", " + SWITCHYARD_COMPILER +
                 (kSanitized ? ", sanitized" : "");
    if (const auto id = core_build_id(); !id.empty())
        o.software += ", build " + id.substr(0, 16);
    o.software += ")";
    return o;
}

std::string CeilingSetOrigin::difference(const CeilingSetOrigin& now) const {
    if (machine_id != now.machine_id) {
        const auto d = first_machine_difference(machine, now.machine, "");
        return "measured on another machine (" + (d.empty() ? "machine id " + machine_id : d) + ")";
    }
    if (host != now.host)
        return "measured on another host (" + host + ", now " + now.host + ")";
    if (software != now.software)
        return "measured by another build of the core (" + software + ", now " + now.software + ")";
    if (kernel != now.kernel)
        return "measured under another kernel (" + kernel + ", now " + now.kernel + ")";
    return {};
}

nlohmann::json CeilingSetOrigin::to_json() const {
    return origin_fields({{"machine", machine}}, *this);
}

CeilingSetOrigin CeilingSetOrigin::from_json(const nlohmann::json& j) {
    if (!j.is_object())
        throw std::runtime_error(std::string("origin: expected an object, got ") + j.type_name());
    CeilingSetOrigin o;
    o.machine_id = string_member(j, "machine_id", "origin");
    o.machine = member(j, "machine", "origin");
    o.host = string_member(j, "host", "origin");
    o.software = string_member(j, "software", "origin");
    o.kernel = string_member(j, "kernel", "origin");
    return o;
}

nlohmann::json CachedCeilings::to_json() const {
    return {{"format", kCeilingCacheFormat},  {"format_version", kCeilingCacheFormatVersion},
            {"origin", origin.to_json()},     {"measured", measured},
            {"measured_unix", measured_unix}, {"cpu_peaks", peaks.to_json()}};
}

CachedCeilings CachedCeilings::from_json(const nlohmann::json& j) {
    if (!j.is_object())
        throw std::runtime_error(std::string("expected an object, got ") + j.type_name());
    if (jsonread::text_or(j, "format") != kCeilingCacheFormat)
        throw std::runtime_error(std::string("format: expected \"") + kCeilingCacheFormat + "\"");
    const auto& version = member(j, "format_version", "");
    if (!version.is_number_integer() || version.get<std::int64_t>() != kCeilingCacheFormatVersion)
        throw std::runtime_error("format_version: " + version.dump() + ", this build reads " +
                                 std::to_string(kCeilingCacheFormatVersion));
    CachedCeilings c;
    c.origin = CeilingSetOrigin::from_json(member(j, "origin", ""));
    c.measured = string_member(j, "measured", "");
    const auto& unix_time = member(j, "measured_unix", "");
    if (!unix_time.is_number_integer())
        throw std::runtime_error("measured_unix: expected an integer");
    c.measured_unix = unix_time.get<std::int64_t>();
    try {
        c.peaks = CpuPeaks::from_json(member(j, "cpu_peaks", ""));
    } catch (const std::exception& e) {
        const std::string what = e.what();
        throw std::runtime_error(what.rfind("peaks", 0) == 0 ? "cpu_" + what
                                                             : "cpu_peaks: " + what);
    }
    return c;
}

CeilingCache::CeilingCache(std::string folder) : m_folder(std::move(folder)) {}

std::string CeilingCache::file_for(const CeilingSetOrigin& origin) const {
    return (std::filesystem::path(m_folder) /
            ("ceilings-" + file_name_part(origin.host) + "-" + origin.machine_id + ".json"))
        .string();
}

namespace {

// Reads a cached set of `file` into `out` and says why it cannot be used now ("" when it
// can): --fresh, an age limit of 0, none there, unreadable, another origin, too old.
template <class Cached>
std::string cached_set_problem(const std::string& file, const CeilingSetOrigin& here,
                               const CeilingCachePolicy& policy, std::int64_t now_unix,
                               const char* what, Cached& out, double& age_days) {
    if (policy.fresh)
        return "--fresh-ceilings";
    if (!(policy.max_age_days > 0))
        return "the age limit of cached ceilings is 0 days (--ceilings-max-age)";
    std::error_code ec;
    const auto status = std::filesystem::symlink_status(file, ec);
    if (ec || status.type() == std::filesystem::file_type::not_found)
        return std::string("no cached set for this ") + what;
    try {
        safefile::InputFile in(file, safefile::InputFile::Accept::RegularFile);
        const auto text = in.read_all(kCeilingCacheMaxBytes, "cached set of ceilings");
        out = Cached::from_json(jsonread::parse(text));
    } catch (const std::exception& e) {
        return "the cached set in " + file + " could not be read (" + std::string(e.what()) +
               "), so it is measured again and replaced";
    }
    if (const auto d = out.origin.difference(here); !d.empty())
        return "the cached set was " + d;
    age_days = double(now_unix - out.measured_unix) / 86400.0;
    if (age_days < -1.0 / 24)
        return "the cached set is dated " + out.measured + ", later than now (the clock moved)";
    if (age_days > policy.max_age_days)
        return "the cached set is " + days_text(age_days) + " old, older than the " +
               days_text(policy.max_age_days) + " limit (--ceilings-max-age)";
    return {};
}

nlohmann::json cache_set(const std::string& file, const std::string& measured,
                         std::int64_t measured_unix, double age_days, double max_age_days,
                         const CeilingSetOrigin& origin) {
    return origin_fields({{"source", "cache"},
                          {"file", file},
                          {"measured", measured},
                          {"measured_unix", measured_unix},
                          {"age_days", std::round(std::max(0.0, age_days) * 1000) / 1000},
                          {"max_age_days", max_age_days}},
                         origin);
}

// Writes `document` to `file` in `folder`; the set says where ("stored") or why not.
void keep(const std::string& folder, const std::string& file, const nlohmann::json& document,
          nlohmann::json& set) {
    try {
        std::error_code ec;
        std::filesystem::create_directories(folder, ec);
        if (ec)
            throw std::runtime_error(folder + ": cannot create the folder: " + ec.message());
        safefile::write_file(file, document.dump(1) + "\n");
        set["stored"] = file;
    } catch (const std::exception& e) {
        set["store_error"] = e.what();
    }
}

} // namespace

CeilingSetChoice CeilingCache::choose(const CeilingCachePolicy& policy,
                                      std::int64_t now_unix) const {
    CeilingSetChoice c;
    c.origin = CeilingSetOrigin::here();
    const std::string file = file_for(c.origin);
    auto measure = [&](const std::string& why) {
        c.peaks.reset();
        c.store = true;
        c.set = {{"source", "measured"}, {"why", why}, {"file", file}};
        return c;
    };
    CachedCeilings cached;
    double age_days = 0;
    if (const auto why =
            cached_set_problem(file, c.origin, policy, now_unix, "machine", cached, age_days);
        !why.empty())
        return measure(why);
    if (const auto p = pin_mismatch(cached.peaks.pinned_cpu); !p.empty())
        return measure("the cached set does not fit this run's CPU: " + p);
    c.peaks = cached.peaks;
    c.store = false;
    c.set = cache_set(file, cached.measured, cached.measured_unix, age_days, policy.max_age_days,
                      cached.origin);
    c.set["id"] = fingerprint_id(cached.peaks.to_json());
    return c;
}

void CeilingCache::record(CeilingSetChoice& choice, const CpuPeaks& peaks,
                          std::int64_t now_unix) const {
    if (!choice.store)
        return;
    choice.store = false;
    CachedCeilings set;
    set.origin = choice.origin;
    set.measured_unix = now_unix;
    set.measured = text::utc_iso8601(std::time_t(now_unix));
    set.peaks = peaks;
    if (!choice.set.is_object())
        choice.set = nlohmann::json::object();
    choice.set = origin_fields(std::move(choice.set), choice.origin);
    choice.set["measured"] = set.measured;
    choice.set["measured_unix"] = set.measured_unix;
    choice.set["id"] = fingerprint_id(peaks.to_json());
    keep(m_folder, file_for(set.origin), set.to_json(), choice.set);
}

std::string CeilingCache::file_for_device(const CeilingSetOrigin& origin,
                                          const std::string& identity) const {
    return (std::filesystem::path(m_folder) /
            ("device-" + file_name_part(origin.host) + "-" +
             fingerprint_id(
                 nlohmann::json{{"machine_id", origin.machine_id}, {"identity", identity}}) +
             ".json"))
        .string();
}

DeviceCeilingChoice CeilingCache::choose_device(const std::string& identity,
                                                const CeilingCachePolicy& policy,
                                                std::int64_t now_unix) const {
    DeviceCeilingChoice c;
    c.origin = CeilingSetOrigin::here();
    c.identity = identity;
    const std::string file = file_for_device(c.origin, identity);
    CachedDeviceCeilings cached;
    double age_days = 0;
    auto why = cached_set_problem(file, c.origin, policy, now_unix, "device", cached, age_days);
    if (why.empty() && cached.identity != identity)
        why = "the cached set was measured on another device or driver (" + cached.identity +
              ", now " + identity + ")";
    if (!why.empty()) {
        c.store = true;
        c.set = {{"source", "measured"}, {"why", why}, {"file", file}, {"identity", identity}};
        return c;
    }
    c.prepared = std::move(cached.prepared);
    c.set = cache_set(file, cached.measured, cached.measured_unix, age_days, policy.max_age_days,
                      cached.origin);
    c.set["identity"] = identity;
    return c;
}

void CeilingCache::record_device(DeviceCeilingChoice& choice, const DeviceInfo& prepared,
                                 std::int64_t now_unix) const {
    if (!choice.store)
        return;
    choice.store = false;
    CachedDeviceCeilings set;
    set.origin = choice.origin;
    set.identity = choice.identity;
    set.measured_unix = now_unix;
    set.measured = text::utc_iso8601(std::time_t(now_unix));
    set.prepared = prepared;
    if (!choice.set.is_object())
        choice.set = nlohmann::json::object();
    choice.set = origin_fields(std::move(choice.set), choice.origin);
    choice.set["measured"] = set.measured;
    choice.set["measured_unix"] = set.measured_unix;
    keep(m_folder, file_for_device(set.origin, set.identity), set.to_json(), choice.set);
}

nlohmann::json CachedDeviceCeilings::to_json() const {
    return {{"format", kDeviceCacheFormat},
            {"format_version", kCeilingCacheFormatVersion},
            {"origin", origin.to_json()},
            {"identity", identity},
            {"measured", measured},
            {"measured_unix", measured_unix},
            {"device", prepared}};
}

CachedDeviceCeilings CachedDeviceCeilings::from_json(const nlohmann::json& j) {
    if (!j.is_object())
        throw std::runtime_error(std::string("expected an object, got ") + j.type_name());
    if (jsonread::text_or(j, "format") != kDeviceCacheFormat)
        throw std::runtime_error(std::string("format: expected \"") + kDeviceCacheFormat + "\"");
    const auto& version = member(j, "format_version", "");
    if (!version.is_number_integer() || version.get<std::int64_t>() != kCeilingCacheFormatVersion)
        throw std::runtime_error("format_version: " + version.dump() + ", this build reads " +
                                 std::to_string(kCeilingCacheFormatVersion));
    CachedDeviceCeilings c;
    c.origin = CeilingSetOrigin::from_json(member(j, "origin", ""));
    c.identity = string_member(j, "identity", "");
    c.measured = string_member(j, "measured", "");
    const auto& unix_time = member(j, "measured_unix", "");
    if (!unix_time.is_number_integer())
        throw std::runtime_error("measured_unix: expected an integer");
    c.measured_unix = unix_time.get<std::int64_t>();
    try {
        c.prepared = member(j, "device", "").get<DeviceInfo>();
    } catch (const std::exception& e) {
        throw std::runtime_error(std::string("device: ") + e.what());
    }
    return c;
}

nlohmann::json prepare_device(Device& device, const CeilingCache* cache,
                              const CeilingCachePolicy& policy) {
    auto* state = dynamic_cast<PreparedState*>(&device);
    const std::string identity = state ? state->prepared_identity() : std::string();
    if (!cache || identity.empty()) {
        device.prepare();
        return state ? nlohmann::json{{"source", "measured"},
                                      {"why", cache ? "the device names no identity to keep "
                                                      "its figures by"
                                                    : "no cache of ceilings in use"}}
                     : nlohmann::json();
    }
    const auto now = [] { return std::int64_t(std::time(nullptr)); };
    auto choice = cache->choose_device(identity, policy, now());
    if (choice.prepared)
        state->adopt_prepared(*choice.prepared);
    device.prepare();
    cache->record_device(choice, device.info(), now());
    return choice.set;
}

CeilingSetChoice uncached_ceiling_choice(const std::string& why) {
    CeilingSetChoice c;
    c.set = {{"source", "measured"}, {"why", why}};
    return c;
}

CeilingSetChoice reported_ceiling_choice(const std::string& report, const std::string& measured,
                                         CpuPeaks peaks) {
    CeilingSetChoice c;
    c.set = {{"source", "report"},
             {"report", report},
             {"measured", measured},
             {"id", fingerprint_id(peaks.to_json())}};
    c.peaks = std::move(peaks);
    return c;
}

std::string ceiling_set_note(const nlohmann::json& set) {
    if (!set.is_object())
        return {};
    const std::string source = jsonread::text_or(set, "source");
    if (source == "cache") {
        const auto when = set.find("measured_unix");
        const std::string date = when != set.end() && when->is_number_integer()
                                     ? local_minutes(when->get<std::int64_t>())
                                     : jsonread::text_or(set, "measured", "an unknown date");
        return "ceilings from " + date + ", this machine; --fresh-ceilings re-measures";
    }
    if (source == "report")
        return "ceilings from " + jsonread::text_or(set, "report", "an earlier report") +
               " (measured " + jsonread::text_or(set, "measured", "at an unknown date") + ")";
    if (source != "measured")
        return {};
    std::string note = "ceilings measured in this run";
    if (const auto why = jsonread::text_or(set, "why"); !why.empty())
        note += " (" + why + ")";
    if (const auto stored = jsonread::text_or(set, "stored"); !stored.empty())
        note += "; kept for the next runs in " + stored;
    else if (const auto error = jsonread::text_or(set, "store_error"); !error.empty())
        note += "; not kept for the next runs: " + error;
    return note;
}

} // namespace switchyard
