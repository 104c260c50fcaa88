// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/registry/backendregistry.h>

#include <QIcon>

namespace switchyard::ui {

/// The icon for a backend's state and cause (resources/icons; painted when Qt cannot
/// render SVG here).
QIcon backendIcon(const BackendInfo& info);
QIcon stateIcon(BackendState state, BackendCause cause = BackendCause::None);

} // namespace switchyard::ui
