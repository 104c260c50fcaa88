// SPDX-License-Identifier: MIT
#include <switchyard/tuning/tuning.h>

#include <switchyard/hardware/devicekind.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/profiling/fingerprint.h>
#include <switchyard/sdk/version.h>

#include "jsonfile.h"
#include "util/jsonread.h"
#include "util/safefile.h"
#include "util/textutil.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace switchyard {

namespace {

constexpr const char* kTuningFormat = "switchyard.tuning";
constexpr int kTuningFormatVersion = 1;
constexpr std::size_t kTuningMaxBytes = std::size_t(16) << 20;

nlohmann::json cell_json(const TunedCell& c) {
    return {{"cell", c.cell},
            {"backend", c.code.backend},
            {"version", c.code.version},
            {"build_id", c.code.build_id}};
}

TunedCell cell_from(const jsonread::Value& v) {
    TunedCell c;
    c.cell = v.str("cell");
    c.code.backend = v.str("backend");
    c.code.version = v.str("version", std::string());
    c.code.build_id = v.str("build_id", std::string());
    if (c.cell.find('/') == std::string::npos)
        v.fail("cell '" + c.cell + "' is not arch/variant");
    return c;
}

nlohmann::json evidence_json(const TuningEvidence& e) {
    return {{"size", e.size},
            {"chosen_median_s", e.chosen_median_s},
            {"overridden_median_s", e.overridden_median_s},
            {"speedup", e.speedup},
            {"p_value", e.p_value},
            {"threshold", e.threshold},
            {"runs", e.runs}};
}

TuningEntry entry_from(const jsonread::Value& v) {
    v.expect(jsonread::Kind::Object);
    TuningEntry e;
    e.op = v.str("op");
    e.device = v.str("device");
    e.variant = v.str("variant", std::string("default"));
    e.sizes = v.strings("sizes");
    e.min_work = v.num("min_work");
    e.max_work = v.num("max_work");
    if (e.min_work <= 0 || e.max_work < e.min_work)
        v.fail("min_work and max_work must be 0 < min_work <= max_work");
    e.chosen = cell_from(v.at("chosen"));
    e.overrides = cell_from(v.at("overrides"));
    if (const auto list = v.find("evidence")) {
        list->expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < list->size(); ++i) {
            const auto x = (*list)[i];
            TuningEvidence ev;
            ev.size = x.str("size");
            ev.chosen_median_s = x.num("chosen_median_s");
            ev.overridden_median_s = x.num("overridden_median_s");
            ev.speedup = x.num("speedup");
            ev.p_value = x.num("p_value", 1.0);
            ev.threshold = x.num("threshold", 0.0);
            ev.runs = int(x.integer("runs", 1, 1, 1 << 20));
            e.evidence.push_back(std::move(ev));
        }
    }
    e.date = v.str("date", std::string());
    e.report = v.str("report", std::string());
    return e;
}

} // namespace

std::string TuningEntry::label() const {
    std::string sizes_text;
    if (!sizes.empty())
        sizes_text = sizes.size() == 1 ? sizes.front() : sizes.front() + " - " + sizes.back();
    return op + " on " + device + (variant == "default" ? "" : " (variant " + variant + ")") +
           (sizes_text.empty() ? "" : ", " + sizes_text);
}

std::string TuningEntry::sizes_text() const {
    return sizes.empty()       ? std::string("its sizes")
           : sizes.size() == 1 ? sizes.front()
                               : sizes.front() + " to " + sizes.back();
}

std::string TunedCell::arch() const {
    const auto slash = cell.find('/');
    return slash == std::string::npos ? std::string() : cell.substr(0, slash);
}

std::string TunedCell::variant() const {
    const auto slash = cell.find('/');
    return slash == std::string::npos ? std::string() : cell.substr(slash + 1);
}

double TuningEntry::speedup() const {
    double least = 0;
    for (const auto& e : evidence)
        least = least == 0 ? e.speedup : std::min(least, e.speedup);
    return least == 0 ? 1 : least;
}

nlohmann::json Tuning::to_json() const {
    auto list = nlohmann::json::array();
    for (const auto& e : entries) {
        auto ev = nlohmann::json::array();
        for (const auto& x : e.evidence)
            ev.push_back(evidence_json(x));
        list.push_back({{"op", e.op},
                        {"device", e.device},
                        {"variant", e.variant},
                        {"sizes", e.sizes},
                        {"min_work", e.min_work},
                        {"max_work", e.max_work},
                        {"chosen", cell_json(e.chosen)},
                        {"overrides", cell_json(e.overrides)},
                        {"evidence", std::move(ev)},
                        {"date", e.date},
                        {"report", e.report}});
    }
    return {{"format", kTuningFormat},      {"format_version", kTuningFormatVersion},
            {"machine_id", machine_id},     {"machine", machine},
            {"core_version", core_version}, {"created", created},
            {"entries", std::move(list)}};
}

Tuning Tuning::from_json(const nlohmann::json& j, std::string source) {
    const jsonread::Value v(j, "tuning");
    v.expect(jsonread::Kind::Object);
    const std::string format = v.str("format", std::string());
    if (format != kTuningFormat)
        v.fail("not a tuning file (format '" + text::untrusted(format.substr(0, 60)) +
               "', expected '" + kTuningFormat + "')");
    const auto version = v.integer("format_version", 1, 1, 1 << 20);
    if (version > kTuningFormatVersion)
        v.fail("format_version " + std::to_string(version) + " is newer than this Switchyard's (" +
               std::to_string(kTuningFormatVersion) + "): upgrade Switchyard, or tune again");
    Tuning t;
    t.source = std::move(source);
    t.machine_id = v.str("machine_id");
    if (const auto m = v.find("machine"); m && m->raw().is_object())
        t.machine = m->raw();
    t.core_version = v.str("core_version", std::string());
    t.created = v.str("created", std::string());
    if (const auto list = v.find("entries")) {
        list->expect(jsonread::Kind::Array);
        for (std::size_t i = 0; i < list->size(); ++i) {
            try {
                t.entries.push_back(entry_from((*list)[i]));
            } catch (const std::exception& e) {
                t.read_warnings.push_back("entry " + std::to_string(i) +
                                          " ignored: " + std::string(e.what()));
            }
        }
    }
    return t;
}

Tuning Tuning::load(const std::string& path) {
    return tuningfile::load(path, kTuningMaxBytes, "tuning file",
                            [&](const nlohmann::json& j) { return from_json(j, path); });
}

void Tuning::save(const std::string& path) const {
    tuningfile::save(path, to_json());
}

std::string user_tuning_dir() {
    const std::string plugins = user_plugin_dir();
    if (plugins.empty())
        return {};
    return (std::filesystem::path(plugins).parent_path() / "tuning").string();
}

std::string default_tuning_file(const std::string& machine_id) {
    const auto dir = user_tuning_dir();
    if (dir.empty())
        throw std::invalid_argument("no home folder to keep the tuning in: give a file");
    return dir + "/" + (machine_id.empty() ? std::string("unknown") : machine_id) + ".tuning";
}

std::string report_beside(const std::string& tuning_file, const std::string& date) {
    std::string stem = tuning_file;
    if (stem.ends_with(".tuning"))
        stem.resize(stem.size() - 7);
    return stem + "." + date.substr(0, 10) + ".report.json";
}

Tuning merge_with_file(Tuning fresh, const std::string& file, std::vector<std::string>& notes) {
    std::error_code ec;
    if (!std::filesystem::exists(file, ec))
        return fresh;
    try {
        const auto old = Tuning::load(file);
        if (old.machine_id != fresh.machine_id) {
            notes.push_back(file + " held a tuning of another machine (" + old.machine_id +
                            "); replaced");
            return fresh;
        }
        const auto key = [](const TuningEntry& e) {
            return e.op + "|" + e.device + "|" + e.variant;
        };
        std::vector<std::string> tuned;
        for (const auto& e : fresh.entries)
            tuned.push_back(key(e));
        std::size_t kept = 0;
        for (const auto& e : old.entries)
            if (std::find(tuned.begin(), tuned.end(), key(e)) == tuned.end()) {
                fresh.entries.push_back(e);
                ++kept;
            }
        if (kept)
            notes.push_back("kept " + std::to_string(kept) + (kept == 1 ? " entry" : " entries") +
                            " of other ops from " + file);
    } catch (const std::exception& e) {
        notes.push_back(std::string(e.what()) + "; replaced");
    }
    return fresh;
}

std::vector<std::string> tuning_paths() {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    auto add = [&](const std::string& path, bool named) {
        std::error_code ec;
        if (fs::is_directory(path, ec)) {
            std::vector<std::string> files;
            for (const auto& f : fs::directory_iterator(path, ec))
                if (f.path().extension() == ".tuning")
                    files.push_back(f.path().string());
            std::sort(files.begin(), files.end());
            out.insert(out.end(), files.begin(), files.end());
        } else if (named) {
            out.push_back(path); // a named file that is missing is said when it is read
        }
    };
    if (const char* env = std::getenv("SWITCHYARD_TUNING"); env && *env) {
        std::string list = env;
        std::size_t start = 0;
        while (start <= list.size()) {
            const auto end = std::min(list.find(':', start), list.size());
            if (end > start)
                add(list.substr(start, end - start), true);
            start = end + 1;
        }
    }
    if (const auto dir = user_tuning_dir(); !dir.empty())
        add(dir, false);
    return out;
}

TuningSet load_tunings(const std::vector<std::string>& paths) {
    TuningSet set;
    for (const auto& path : paths) {
        try {
            set.tunings.push_back(Tuning::load(path));
        } catch (const std::exception& e) {
            set.problems.push_back(e.what());
        }
    }
    return set;
}

std::string machine_id_for(const nlohmann::json& machine, std::string_view device_kind) {
    nlohmann::json part = machine.is_object() ? machine : nlohmann::json::object();
    auto gpus = nlohmann::json::array();
    // The host's GPUs (entries with a "model"), for a device kind other than the CPU. Entries
    // without one are the devices a run selected, as fingerprints before one identity per
    // host recorded them: never part of the identity, so those files still match this host.
    if (const auto it = part.find("gpus"); it != part.end() && it->is_array() &&
                                           switchyard::device_kind(device_kind) != DeviceKind::Cpu)
        for (const auto& g : *it)
            if (g.is_object() && g.contains("model"))
                gpus.push_back(g);
    part["gpus"] = std::move(gpus);
    return fingerprint_id(part);
}

double size_work(const std::array<std::int64_t, 3>& dims) noexcept {
    double work = 1;
    bool any = false;
    for (const auto d : dims)
        if (d > 0) {
            work *= double(d);
            any = true;
        }
    return any ? work : 0;
}

} // namespace switchyard
