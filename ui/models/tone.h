// SPDX-License-Identifier: MIT
#pragma once

#include <QColor>

namespace switchyard::ui {

/// Colours that read on the current palette (light or dark).
enum class Tone { Good, Warning, Bad, Winner, Muted };
QColor toneColor(Tone tone, bool background = false);

} // namespace switchyard::ui
