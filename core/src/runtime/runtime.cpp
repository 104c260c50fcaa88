// SPDX-License-Identifier: MIT
#include <switchyard/runtime/runtime.h>

#include <switchyard/doctor/doctor.h>
#include <switchyard/worker/inspect.h>

#include <switchyard/kernels/cpudevice.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/sdk/version.h>

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

} // namespace switchyard
