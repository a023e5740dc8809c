# `cmake --install`: headers, libearlybird.a, libearlybird_collectives.a,
# libearlybird_mpi.so, eb-bench, a CMake package (find_package(earlybird 0.1)
# -> earlybird::earlybird) and a pkg-config file (earlybird.pc).
# `cpack -G DEB` packs the same tree as a Debian package that depends on the
# Debian packages the runtime needs.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(EB_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/earlybird)
install(TARGETS earlybird earlybird_collectives EXPORT earlybirdTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS earlybird_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET eb-bench)
  install(TARGETS eb-bench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/runtime/include/ ${PROJECT_SOURCE_DIR}/collectives/include/
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT earlybirdTargets NAMESPACE earlybird:: DESTINATION ${EB_CMAKE_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/earlybirdConfig.cmake.in
  ${PROJECT_BINARY_DIR}/earlybirdConfig.cmake
  INSTALL_DESTINATION ${EB_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_LIBDIR)
# 0.x: a minor version may break the API, so 0.1 accepts 0.1.* only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/earlybirdConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/earlybirdConfig.cmake ${PROJECT_BINARY_DIR}/earlybirdConfigVersion.cmake
        DESTINATION ${EB_CMAKE_DIR})

# earlybird.pc finds the headers relative to its own directory (pkg-config's
# ${pcfiledir}), so the installed tree can move (cmake --install --prefix).
file(RELATIVE_PATH EB_PC_TO_INCLUDEDIR /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix/${CMAKE_INSTALL_INCLUDEDIR})
configure_file(${CMAKE_CURRENT_LIST_DIR}/earlybird.pc.in ${PROJECT_BINARY_DIR}/earlybird.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/earlybird.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

set(CPACK_PACKAGE_NAME earlybird)
set(CPACK_PACKAGE_VENDOR earlybird)
set(CPACK_PACKAGE_CONTACT "earlybird developers <earlybird@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "MPI collectives as futures on MPI-3 RMA, with arrival-pattern-aware algorithms")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Headers and static libraries: what a program building against earlybird
# needs are the -dev packages; the shared objects' own needs come from
# dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenmpi-dev, openmpi-bin, libtbb-dev, libhwloc-dev")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
include(CPack)
