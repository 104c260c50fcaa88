// SPDX-License-Identifier: MIT
#include <switchyard/hardware/sdkjson.h>
#include <switchyard/report/runcontext.h>

#include <switchyard/buildinfo.h>
#include <switchyard/profiling/fingerprint.h>
#include <switchyard/sdk/version.h>

#include "util/textutil.h"

#include <algorithm>
#include <initializer_list>
#include <string_view>

namespace switchyard {
namespace runcontext {
namespace {

using nlohmann::json;

// Lenient reads: a missing key or one of another type keeps the default, and a present key of
// the wrong type is said once in `warnings` under its path.
class Reader {
public:
    Reader(const json& j, std::string path, std::vector<std::string>& warnings)
        : m_j(j), m_path(std::move(path)), m_warnings(warnings) {}

    const json* find(const char* key, bool (json::*is)() const noexcept) const {
        if (!m_j.is_object())
            return nullptr;
        const auto it = m_j.find(key);
        if (it == m_j.end() || it->is_null())
            return nullptr;
        if (!((*it).*is)()) {
            m_warnings.push_back("context." + m_path + key + " left out: expected " + expected(is) +
                                 ", got " + it->type_name());
            return nullptr;
        }
        return &*it;
    }
    void text(const char* key, std::string& out) const {
        if (const auto* v = find(key, &json::is_string))
            out = v->get<std::string>();
    }
    template <class Int> void integer(const char* key, Int& out) const {
        if (const auto* v = find(key, &json::is_number_integer))
            out = v->get<Int>();
    }
    void number(const char* key, double& out) const {
        if (const auto* v = find(key, &json::is_number))
            out = v->get<double>();
    }
    void boolean(const char* key, bool& out) const {
        if (const auto* v = find(key, &json::is_boolean))
            out = v->get<bool>();
    }
    void texts(const char* key, std::vector<std::string>& out) const {
        if (const auto* v = find(key, &json::is_array)) {
            out.clear();
            for (const auto& e : *v)
                if (e.is_string())
                    out.push_back(e.get<std::string>());
        }
    }
    Reader object(const char* key) const {
        static const json kNone = json::object();
        const auto* v = find(key, &json::is_object);
        return Reader(v ? *v : kNone, m_path + key + ".", m_warnings);
    }
    bool has(const char* key) const { return m_j.is_object() && m_j.contains(key); }

private:
    static std::string expected(bool (json::*is)() const noexcept) {
        if (is == &json::is_string)
            return "a string";
        if (is == &json::is_object)
            return "an object";
        if (is == &json::is_array)
            return "an array";
        if (is == &json::is_boolean)
            return "true or false";
        return "a number";
    }
    const json& m_j;
    std::string m_path;
    std::vector<std::string>& m_warnings;
};

HostInfo read_host(const Reader& r) {
    HostInfo h;
    r.text("hostname", h.hostname);
    r.text("os", h.os);
    r.text("distro", h.distro);
    r.integer("memory_bytes", h.memory_bytes);
    r.text("governor", h.governor);
    r.integer("throttle_count", h.throttle_count);
    return h;
}

CpuInfo read_cpu(const Reader& r, const json& raw) {
    CpuInfo c;
    r.text("architecture", c.architecture);
    r.text("vendor", c.vendor);
    r.text("brand", c.brand);
    r.text("microarchitecture", c.microarchitecture);
    r.integer("family", c.family);
    r.integer("model", c.model);
    r.integer("stepping", c.stepping);
    r.integer("logical_cpus", c.logical_cpus);
    r.integer("physical_cores", c.physical_cores);
    if (const auto it = raw.find("caches"); it != raw.end() && it->is_array())
        for (const auto& e : *it) {
            if (!e.is_object())
                continue;
            CacheLevel level;
            level.level = int(jsonread::integer_or(e, "level", 0, 16));
            level.type = jsonread::text_or(e, "type");
            level.size_bytes = jsonread::integer_or(e, "size_bytes", 0, std::int64_t(1) << 50);
            level.line_bytes = int(jsonread::integer_or(e, "line_bytes", 0, 1 << 20));
            level.ways = int(jsonread::integer_or(e, "ways", 0, 1 << 20));
            c.caches.push_back(level);
        }
    r.text("cache_source", c.cache_source);
    r.text("cache_note", c.cache_note);
    r.texts("features", c.features);
    r.texts("isa_levels", c.isa_levels);
    r.text("best_level", c.best_level);
    r.text("isa_cap", c.isa_cap);
    r.texts("detected_isa_levels", c.detected_isa_levels);
    return c;
}

// The keys the typed fields hold; anything else is `extra`.
constexpr std::string_view kKnown[] = {"switchyard",  "date",     "host",          "cpu",
                                       "cpu_peaks",   "clock",    "openblas",      "devices",
                                       "fingerprint", "settings", "warnings",      "containment",
                                       "ceiling_set", "repeat",   "ceilings_from", "control"};

} // namespace
} // namespace runcontext

RunBuild RunBuild::current() {
    return {std::string(core_version()), std::string(core_git_hash()),
            std::string(core_build_type()), SWITCHYARD_COMPILER};
}

RunFingerprint::Machine RunFingerprint::facts() const {
    using nlohmann::json;
    Machine m;
    std::vector<std::string> ignored; // a fingerprint's oddities are not the reader's problem
    const runcontext::Reader r(machine, "fingerprint.machine.", ignored);
    const auto cpu = r.object("cpu");
    cpu.text("brand", m.cpu_brand);
    cpu.text("microcode", m.microcode);
    cpu.integer("logical_cpus", m.logical_cpus);
    cpu.integer("physical_cores", m.physical_cores);
    r.number("memory_gib", m.memory_gib);
    const auto isa = r.object("isa");
    isa.text("best", m.isa_best);
    isa.text("detected", m.isa_detected);
    isa.text("cap", m.isa_cap);
    if (const auto* gpus = r.find("gpus", &json::is_array)) {
        m.has_gpus = true;
        for (const auto& g : *gpus)
            if (g.is_object()) {
                Gpu gpu;
                const runcontext::Reader gr(g, "", ignored);
                gr.text("id", gpu.id);
                gr.text("name", gpu.name);
                gr.text("arch", gpu.arch);
                gr.text("driver", gpu.driver);
                m.gpus.push_back(std::move(gpu));
            }
    }
    if (r.find("openblas", &json::is_object)) {
        m.has_openblas = true;
        const auto blas = r.object("openblas");
        blas.text("core", m.openblas_core);
        blas.integer("threads", m.openblas_threads);
    }
    runcontext::Reader(software, "fingerprint.software.", ignored).text("os", m.os);
    return m;
}

int RunContext::pinned_cpu() const noexcept {
    return cpu_peaks && cpu_peaks->pinned_cpu >= 0 ? cpu_peaks->pinned_cpu : -1;
}

std::vector<RunContext::DeviceCeiling> RunContext::ceilings() const {
    std::vector<DeviceCeiling> out;
    for (const auto& d : devices) {
        const auto before = out.size();
        for (const auto& c : d.ceilings)
            if (c.value > 0 && (c.kind == "bandwidth" || c.kind == "compute"))
                out.push_back({d.id, c});
        if (out.size() != before)
            continue;
        // A report from before ceilings: the device's headline peaks.
        if (d.peak_bandwidth_gbs > 0) {
            Ceiling c;
            c.id = "peak_bandwidth";
            c.kind = "bandwidth";
            c.level = "peak";
            c.value = d.peak_bandwidth_gbs;
            c.method = d.peak_bandwidth_source;
            out.push_back({d.id, c});
        }
        if (d.peak_gflops > 0) {
            Ceiling c;
            c.id = "peak_gflops";
            c.kind = "compute";
            c.value = d.peak_gflops;
            c.method = d.peak_gflops_source;
            out.push_back({d.id, c});
        }
    }
    return out;
}

nlohmann::json RunContext::to_json() const {
    using nlohmann::json;
    auto device_list = json::array();
    for (const auto& d : devices)
        device_list.push_back(d);
    json j = extra.is_object() ? extra : json::object();
    j["switchyard"] = {{"version", switchyard.version},
                       {"git_hash", switchyard.git_hash},
                       {"build_type", switchyard.build_type},
                       {"compiler", switchyard.compiler}};
    j["date"] = date;
    j["host"] = host.to_json();
    j["cpu"] = cpu.to_json();
    j["cpu_peaks"] = cpu_peaks ? cpu_peaks->to_json() : json();
    j["clock"] = {
        {"method", clock.method}, {"per_sample", clock.per_sample}, {"chain_ghz", clock.chain_ghz}};
    j["openblas"] = openblas.to_json();
    j["devices"] = std::move(device_list);
    j["fingerprint"] = {{"machine", fingerprint.machine},
                        {"software", fingerprint.software},
                        {"machine_id", fingerprint.machine_id}};
    j["settings"] = settings.to_json();
    j["warnings"] = warnings;
    j["repeat"] = repeat;
    if (!containment.empty())
        j["containment"] = containment;
    if (!ceiling_set.is_null())
        j["ceiling_set"] = ceiling_set;
    if (!device_ceiling_sets.empty()) {
        if (!j["ceiling_set"].is_object())
            j["ceiling_set"] = nlohmann::json::object();
        j["ceiling_set"]["devices"] = device_ceiling_sets;
    }
    if (ceilings_from)
        j["ceilings_from"] = {{"report", ceilings_from->report}, {"date", ceilings_from->date}};
    if (control)
        j["control"] = control->to_json();
    return j;
}

RunContext RunContext::from_json(const nlohmann::json& context) {
    using namespace runcontext;
    RunContext c;
    if (!context.is_object()) {
        c.read_warnings.push_back("context left out: expected an object, got " +
                                  std::string(context.type_name()));
        return c;
    }
    const Reader r(context, "", c.read_warnings);
    const auto build = r.object("switchyard");
    build.text("version", c.switchyard.version);
    build.text("git_hash", c.switchyard.git_hash);
    build.text("build_type", c.switchyard.build_type);
    build.text("compiler", c.switchyard.compiler);
    r.text("date", c.date);
    c.host = read_host(r.object("host"));
    if (const auto* cpu = r.find("cpu", &nlohmann::json::is_object))
        c.cpu = read_cpu(r.object("cpu"), *cpu);
    if (const auto* peaks = r.find("cpu_peaks", &nlohmann::json::is_object)) {
        try {
            c.cpu_peaks = CpuPeaks::from_json(*peaks);
        } catch (const std::exception& e) {
            // "peaks.ceilings[0]: ..." names the key.
            const std::string what = e.what();
            c.read_warnings.push_back(
                "context." + (what.rfind("peaks", 0) == 0 ? "cpu_" + what : "cpu_peaks: " + what));
        }
    }
    const auto clock = r.object("clock");
    clock.text("method", c.clock.method);
    clock.boolean("per_sample", c.clock.per_sample);
    clock.number("chain_ghz", c.clock.chain_ghz);
    const auto blas = r.object("openblas");
    blas.boolean("present", c.openblas.present);
    blas.text("corename", c.openblas.corename);
    blas.integer("threads", c.openblas.threads);
    blas.text("config", c.openblas.config);
    if (const auto* devices = r.find("devices", &nlohmann::json::is_array))
        for (std::size_t i = 0; i < devices->size(); ++i) {
            try {
                c.devices.push_back((*devices)[i].get<DeviceInfo>());
            } catch (const std::exception& e) {
                c.read_warnings.push_back("context.devices[" + std::to_string(i) +
                                          "] left out: " + e.what());
            }
        }
    if (const auto* fp = r.find("fingerprint", &nlohmann::json::is_object)) {
        r.object("fingerprint").text("machine_id", c.fingerprint.machine_id);
        if (const auto it = fp->find("machine"); it != fp->end() && it->is_object())
            c.fingerprint.machine = *it;
        if (const auto it = fp->find("software"); it != fp->end() && it->is_object())
            c.fingerprint.software = *it;
    }
    if (const auto* settings = r.find("settings", &nlohmann::json::is_object)) {
        try {
            c.settings = ProfileSettings::from_json(*settings);
        } catch (const std::exception& e) {
            c.read_warnings.push_back(std::string("context.settings left out: ") + e.what());
        }
    }
    r.texts("warnings", c.warnings);
    r.text("containment", c.containment);
    if (const auto it = context.find("ceiling_set"); it != context.end()) {
        c.ceiling_set = *it;
        if (c.ceiling_set.is_object()) {
            if (const auto d = c.ceiling_set.find("devices");
                d != c.ceiling_set.end() && d->is_object())
                for (const auto& [id, set] : d->items())
                    c.device_ceiling_sets[id] = set;
            c.ceiling_set.erase("devices");
            if (c.ceiling_set.empty())
                c.ceiling_set = nullptr;
        }
    }
    r.integer("repeat", c.repeat);
    if (r.find("ceilings_from", &nlohmann::json::is_object)) {
        CeilingsProvenance p;
        const auto from = r.object("ceilings_from");
        from.text("report", p.report);
        from.text("date", p.date);
        c.ceilings_from = p;
    }
    if (const auto* control = r.find("control", &nlohmann::json::is_object)) {
        try {
            c.control = DriftControl::from_json(*control);
        } catch (const std::exception& e) {
            c.read_warnings.push_back(std::string("context.") + e.what());
        }
    }
    for (const auto& [key, value] : context.items())
        if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown))
            c.extra[key] = value;
    return c;
}

RunContext run_context(const Profiler& profiler) {
    RunContext c;
    c.switchyard = RunBuild::current();
    c.date = text::utc_now_iso8601();
    c.host = host_info();
    c.cpu = cpu_info();
    c.cpu_peaks = profiler.cpu_peaks();
    c.clock = run_clock();
    c.openblas = openblas_info();
    c.devices = profiler.context_devices();
    const auto fp = machine_fingerprint();
    c.fingerprint.machine_id = fp.value("machine_id", std::string());
    c.fingerprint.machine = fp.value("machine", nlohmann::json::object());
    c.fingerprint.software = fp.value("software", nlohmann::json::object());
    c.settings = profiler.settings();
    c.device_ceiling_sets = profiler.device_ceiling_sets();
    c.warnings = profiler.context_warnings();
    return c;
}

void to_json(nlohmann::json& j, const RunContext& context) {
    j = context.to_json();
}

void from_json(const nlohmann::json& j, RunContext& context) {
    context = RunContext::from_json(j);
}

} // namespace switchyard
