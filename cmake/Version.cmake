# The program's version and the commit it was built from, printed by every output that carries figures.
find_package(Git QUIET)
set(TILESCOPE_GIT_COMMIT "unknown")
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE _c OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _r ERROR_QUIET)
  if(_r EQUAL 0)
    set(TILESCOPE_GIT_COMMIT "${_c}")
  endif()
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.hpp.in ${PROJECT_BINARY_DIR}/generated/tilescope/version.hpp @ONLY)
