# The program's version and the commit it was built from, printed by every output that carries figures.
# The commit is read at every build (not only when CMake configures), so a figure never names a commit older
# than the code that made it; "-dirty" marks a build with uncommitted changes. Only the small generated
# version_commit.cpp recompiles when it changes.
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.hpp.in ${PROJECT_BINARY_DIR}/generated/tilescope/version.hpp @ONLY)
set(TILESCOPE_VERSION_COMMIT_CPP ${PROJECT_BINARY_DIR}/generated/tilescope/version_commit.cpp)
find_package(Git QUIET)
add_custom_target(tilescope_version_commit
  COMMAND ${CMAKE_COMMAND} -DGIT=${GIT_EXECUTABLE} -DSRC=${PROJECT_SOURCE_DIR} -DOUT=${TILESCOPE_VERSION_COMMIT_CPP}
          -P ${CMAKE_CURRENT_LIST_DIR}/GitCommit.cmake
  BYPRODUCTS ${TILESCOPE_VERSION_COMMIT_CPP}
  COMMENT "Reading the commit this build comes from"
  VERBATIM)
