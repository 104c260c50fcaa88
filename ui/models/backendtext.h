// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/registry/backendregistry.h>

#include <QColor>
#include <QIcon>
#include <QString>

#include <string_view>

namespace switchyard::ui {

inline QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size()));
}

/// The icon for a backend's state and cause (resources/icons; painted when Qt cannot
/// render SVG here).
QIcon backendIcon(const BackendInfo& info);
QIcon stateIcon(BackendState state, BackendCause cause = BackendCause::None);

/// One short sentence saying why a backend is not usable, built from its typed cause:
/// "missing libcuda.so.1 — Install the NVIDIA driver", "contract 2 needs a newer
/// Switchyard", "shadowed by the built-in cpu". Empty when nothing is wrong.
QString whyText(const BackendInfo& info);
/// What to run or install to fix the backend (one line per missing piece).
QString installHints(const BackendInfo& info);

/// Colours that read on the current palette (light or dark).
enum class Tone { Good, Warning, Bad, Winner, Muted };
QColor toneColor(Tone tone, bool background = false);

} // namespace switchyard::ui
