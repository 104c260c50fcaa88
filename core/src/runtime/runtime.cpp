// SPDX-License-Identifier: MIT
#include <switchyard/runtime/runtime.h>

#include <switchyard/doctor/doctor.h>
#include <switchyard/worker/inspect.h>

#include <switchyard/kernels/cpudevice.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/sdk/version.h>

#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "kernels/cpukernels.h"

namespace switchyard {

std::vector<BackendSpec> builtin_backends() {
    std::vector<BackendSpec> specs;
    BackendSpec cpu;
    cpu.name = "cpu";
    cpu.description =
        "Built-in CPU kernels: scalar references, SIMD, threaded and OpenBLAS variants";
    cpu.version = std::string(core_version());
    cpu.register_cells = [](CellRegistrar& r) { register_cpu_cells(r); };
    specs.push_back(std::move(cpu));
    return specs;
}

DeviceRegistry& default_devices() {
    static DeviceRegistry* registry = [] {
        auto* r = new DeviceRegistry; // never destroyed: plugins' devices outlive statics
        r->add_provider(make_cpu_device_provider());
        return r;
    }();
    return *registry;
}

void use_builtins(BackendRegistry& registry) {
    registry.set_builtins(&builtin_backends);
}

BackendRegistry& default_backends() {
    // Never destroyed, like the registries it fills: exiting frees nothing cell by cell.
    static BackendRegistry* registry = [] {
        auto* r = new BackendRegistry(kernels(), components());
        use_builtins(*r);
        r->set_device_registry(&default_devices());
        r->set_plugin_discovery([] { return PluginSearchPath::from_environment().discover(); });
        return r;
    }();
    return *registry;
}

void apply_inspection(DoctorReport& report, const InspectResult& inspected) {
    apply_inspection(report.backends, inspected);
    if (inspected.fatal.empty())
        return;
    DoctorProblem p;
    p.severity = DoctorProblem::Severity::Error;
    p.subject = "device backends";
    p.problem = "listing the devices of the device-backend plugins failed: " + inspected.fatal;
    p.fix = "Run `switchyard-cli show NAME` for each device backend to see which one fails; "
            "move its manifest out of the plugin search path until it is fixed.";
    report.problems.push_back(std::move(p));
}

std::optional<CeilingCache> default_ceiling_cache() {
    const char* env = std::getenv("SWITCHYARD_CEILINGS_CACHE");
    const std::string value = env ? env : "";
    if (value == "off")
        return std::nullopt;
    if (!value.empty())
        return CeilingCache(std::filesystem::absolute(value).lexically_normal().string());
    // The user's data folder, the one the user's plugins folder is in.
    const std::string plugins = user_plugin_dir();
    if (plugins.empty())
        return std::nullopt; // no home folder to keep it in
    return CeilingCache((std::filesystem::path(plugins).parent_path() / "ceilings").string());
}

nlohmann::json prepare_with_ceiling_cache(DeviceRegistry& devices, InspectOptions& inspect,
                                          std::optional<CeilingCachePolicy> policy) {
    if (!policy) {
        policy.emplace();
        policy->max_age_days = default_ceilings_max_age_days();
    }
    const auto cache = default_ceiling_cache();
    if (cache) {
        inspect.ceiling_cache = cache->folder();
        inspect.ceiling_policy = *policy;
    }
    const auto cpu = find_cpu_device(devices);
    if (!cpu)
        return nullptr;
    const auto now = [] { return std::int64_t(std::time(nullptr)); };
    auto choice = cache ? cache->choose(*policy, now())
                        : uncached_ceiling_choice("no cache of ceilings in use");
    if (choice.peaks)
        cpu->set_peaks(*choice.peaks);
    cpu->prepare();
    if (cache && choice.store)
        if (const auto peaks = cpu->peaks())
            cache->record(choice, *peaks, now());
    return choice.set;
}

double default_ceilings_max_age_days() {
    const char* env = std::getenv("SWITCHYARD_CEILINGS_MAX_AGE");
    if (!env || !*env)
        return kDefaultCeilingsMaxAgeDays;
    char* end = nullptr;
    const double days = std::strtod(env, &end);
    if (end == env || *end != '\0' || !std::isfinite(days) || days < 0)
        throw std::invalid_argument(std::string("SWITCHYARD_CEILINGS_MAX_AGE: expected a number "
                                                "of days (0 or more), got '") +
                                    env + "'");
    return days;
}

} // namespace switchyard
