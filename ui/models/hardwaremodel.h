// SPDX-License-Identifier: MIT
#pragma once

#include "models/treemodel.h"

#include <switchyard/doctor/doctor.h>

namespace switchyard::ui {

/// The machine: the CPU (model, cores, caches, ISA levels, features), each device with
/// its properties and peaks, the drivers found, and why a device class is absent.
class HardwareModel : public TreeModel {
    Q_OBJECT
public:
    enum Columns { PropertyColumn, ValueColumn, ColumnCount };
    enum Roles { SortRole = Qt::UserRole };

    explicit HardwareModel(QObject* parent = nullptr);
    void setResults(const DoctorReport& report);
};

} // namespace switchyard::ui
