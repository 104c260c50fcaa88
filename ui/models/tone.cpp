// SPDX-License-Identifier: MIT
#include "models/tone.h"

#include <QApplication>
#include <QPalette>

namespace switchyard::ui {

QColor toneColor(Tone tone, bool background) {
    const bool dark = QApplication::palette().color(QPalette::Base).lightness() < 128;
    switch (tone) {
    case Tone::Good:
        return background ? (dark ? QColor(0x1f, 0x4d, 0x2b) : QColor(0xcf, 0xf0, 0xd6))
                          : (dark ? QColor(0x7c, 0xd9, 0x92) : QColor(0x1e, 0x7b, 0x3a));
    case Tone::Warning:
        return background ? (dark ? QColor(0x5a, 0x46, 0x14) : QColor(0xfb, 0xe8, 0xc0))
                          : (dark ? QColor(0xf0, 0xc0, 0x60) : QColor(0x9a, 0x62, 0x00));
    case Tone::Bad:
        return background ? (dark ? QColor(0x5c, 0x22, 0x22) : QColor(0xf8, 0xd0, 0xd0))
                          : (dark ? QColor(0xff, 0x80, 0x80) : QColor(0xc0, 0x1c, 0x1c));
    case Tone::Winner:
        return background ? (dark ? QColor(0x1d, 0x4f, 0x8a) : QColor(0x9c, 0xc8, 0xf5))
                          : (dark ? QColor(0x8c, 0xc0, 0xff) : QColor(0x12, 0x4f, 0x9c));
    case Tone::Muted:
        return background ? QApplication::palette().color(QPalette::AlternateBase)
                          : QApplication::palette().color(QPalette::Disabled, QPalette::Text);
    }
    return {};
}

} // namespace switchyard::ui
