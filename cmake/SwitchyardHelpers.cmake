# SPDX-License-Identifier: MIT
# switchyard_add_plugin(<target> MANIFEST <file.plugin.json.in> SOURCES ... [OUTPUT_DIR dir] [NO_INSTALL])
# Builds a backend plugin: a shared library plus its manifest beside it.
function(switchyard_add_plugin target)
  cmake_parse_arguments(ARG "NO_INSTALL" "MANIFEST;OUTPUT_DIR;LIBRARY_NAME" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${SWITCHYARD_PLUGIN_OUTPUT_DIR})
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE switchyard::core ${ARG_LIBRARIES})
  # Installed plugins live in <prefix>/lib/switchyard/plugins, the core in <prefix>/lib.
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR}
    CXX_VISIBILITY_PRESET hidden
    INSTALL_RPATH "$ORIGIN/../..")
  if(ARG_LIBRARY_NAME)
    set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_LIBRARY_NAME})
  endif()
  if(ARG_MANIFEST)
    get_filename_component(_name ${ARG_MANIFEST} NAME)
    string(REGEX REPLACE "\\.in$" "" _name "${_name}")
    configure_file(${ARG_MANIFEST} ${ARG_OUTPUT_DIR}/${_name} @ONLY)
    if(NOT ARG_NO_INSTALL)
      install(FILES ${ARG_OUTPUT_DIR}/${_name} DESTINATION ${SWITCHYARD_PLUGIN_INSTALL_DIR})
    endif()
  endif()
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${target} LIBRARY DESTINATION ${SWITCHYARD_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
