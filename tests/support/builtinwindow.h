// SPDX-License-Identifier: MIT
#pragma once

#include "mainwindow.h"

#include <switchyard/hardware/deviceregistry.h>
#include <switchyard/plugins/pluginsearchpath.h>
#include <switchyard/registry/backendregistry.h>
#include <switchyard/runtime/runtime.h>

namespace switchyard::test {

/// A main window over the built-in backends only (no plugins, no device providers), with
/// registries of its own: what the GUI suites need for reports, comparisons, the keyboard and
/// the layout, without the process-wide registries.
struct BuiltinWindow {
    KernelRegistry kernels{"kernels", {"op", "device", "arch", "variant"}};
    ComponentRegistry components{"components", {"kind", "device", "variant"}};
    BackendRegistry registry{kernels, components, builtin_backends};
    DeviceRegistry devices;
    ui::MainWindow window{registry, devices, PluginSearchPath::from_dirs({})};
};

} // namespace switchyard::test
