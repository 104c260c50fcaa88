// SPDX-License-Identifier: MIT
#include <switchyard/sdk/device.h>

#include <chrono>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>

namespace switchyard {

double Device::time_launches(const std::function<void()>& launch, int count) {
    synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < count; ++i)
        launch();
    synchronize();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

namespace {
thread_local PrepareStepScope::Listener t_prepare_step;
} // namespace

void announce_prepare_step(const std::string& step) {
    if (t_prepare_step)
        t_prepare_step(step);
}

PrepareStepScope::PrepareStepScope(Listener listener)
    : m_previous(std::exchange(t_prepare_step, std::move(listener))) {}

PrepareStepScope::~PrepareStepScope() {
    t_prepare_step = std::move(m_previous);
}

} // namespace switchyard
