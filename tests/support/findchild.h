// SPDX-License-Identifier: MIT
#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>

#include <cstdio>
#include <cstdlib>

namespace switchyard::test {

/// The child of `root` named `name` (its objectName), of type T: how the GUI suites find a
/// view's controls, as a user's script or a screen reader would, instead of through accessors
/// the views would keep for tests only. A missing one ends the suite with its name and type,
/// because every later step would act on nothing.
template <class T> T* child(const QObject* root, const char* name) {
    T* found = root->findChild<T*>(QString::fromLatin1(name));
    if (!found) {
        std::fprintf(stderr, "FAIL: no %s named '%s' under %s '%s'\n",
                     T::staticMetaObject.className(), name, root->metaObject()->className(),
                     qPrintable(root->objectName()));
        std::abort();
    }
    return found;
}

} // namespace switchyard::test
