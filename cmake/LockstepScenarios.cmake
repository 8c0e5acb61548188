# LockstepScenarios.cmake (installed with the package; find_package(lockstep) includes it):
# a team's scenario files as CTest tests.
#
#   lockstep_add_scenarios(TARGET <executable> DIR <directory> [NAME <prefix>] [SWEEP])
#
# TARGET is the lockstep command line that knows the team's systems: an executable of the
# team's that links lockstep::cli and calls lockstep::main, or lockstep::command for the
# built-in systems. DIR holds the scenario files (*.json, *.spec; a relative path is taken
# from the current source directory). They are read from there when the tests run, never
# copied: the file edited is the file checked.
#
# Without SWEEP: one test per file, `TARGET check FILE`, named <prefix>/<path without the
# extension> (the prefix defaults to DIR's name), passing when the verdict is the one the
# file expects; its failing trace goes to <binary dir>/<prefix>-traces/. The files are
# globbed with CONFIGURE_DEPENDS, so a file added later joins the tests at the next build.
# With SWEEP: one test, `TARGET sweep DIR`, which finds the files as it runs; its report
# goes to <binary dir>/<prefix>-reports/.
function(lockstep_add_scenarios)
  cmake_parse_arguments(PARSE_ARGV 0 arg "SWEEP" "TARGET;DIR;NAME" "")
  if(NOT arg_TARGET OR NOT arg_DIR)
    message(FATAL_ERROR "lockstep_add_scenarios: give TARGET <executable> and DIR <directory of scenario files>")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "lockstep_add_scenarios: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${arg_TARGET})
    message(FATAL_ERROR "lockstep_add_scenarios: TARGET ${arg_TARGET} is not a target (an executable that calls lockstep::main, or lockstep::command)")
  endif()
  get_filename_component(dir "${arg_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT IS_DIRECTORY "${dir}")
    message(FATAL_ERROR "lockstep_add_scenarios: DIR ${dir} is not a directory")
  endif()
  if(arg_NAME)
    set(prefix "${arg_NAME}")
  else()
    get_filename_component(prefix "${dir}" NAME)
  endif()
  if(arg_SWEEP)
    add_test(NAME ${prefix}_sweep COMMAND ${arg_TARGET} sweep "${dir}" --out "${CMAKE_CURRENT_BINARY_DIR}/${prefix}-reports")
    return()
  endif()
  file(GLOB_RECURSE files CONFIGURE_DEPENDS "${dir}/*.json" "${dir}/*.spec")
  if(NOT files)
    message(FATAL_ERROR "lockstep_add_scenarios: no *.json or *.spec file in ${dir}")
  endif()
  list(SORT files)
  foreach(file IN LISTS files)
    file(RELATIVE_PATH name "${dir}" "${file}")
    string(REGEX REPLACE "\\.(json|spec)$" "" name "${name}")
    add_test(NAME ${prefix}/${name}
             COMMAND ${arg_TARGET} check "${file}" --trace-out "${CMAKE_CURRENT_BINARY_DIR}/${prefix}-traces/${name}.json")
  endforeach()
endfunction()
