// SPDX-License-Identifier: MIT
#pragma once

#include <QElapsedTimer>

#include <chrono>
#include <thread>

namespace switchyard::test {

/// Waits up to `ms` milliseconds for `pred` to hold, polling every 20 ms; false on timeout.
template <class Pred> bool eventually(Pred pred, int ms) {
    QElapsedTimer t;
    t.start();
    while (!pred()) {
        if (t.elapsed() > ms)
            return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
}

} // namespace switchyard::test
