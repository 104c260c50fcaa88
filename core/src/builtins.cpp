// SPDX-License-Identifier: MIT
// The built-in backends, registered through this one explicit function.
#include <switchyard/backendregistry.h>

#include "kernels/cpukernels.h"

namespace switchyard {

std::vector<BackendSpec> builtin_backends() {
    std::vector<BackendSpec> specs;
    BackendSpec cpu;
    cpu.name = "cpu";
    cpu.description = "Built-in CPU kernels: scalar references, SIMD, threaded and OpenBLAS variants";
    cpu.version = std::string(core_version());
    cpu.register_cells = [](CellRegistrar& r) { register_cpu_cells(r); };
    specs.push_back(std::move(cpu));
    return specs;
}

} // namespace switchyard
