# `make install` (cmake --install): what a program of a user's own needs to load and run the
# modules tessel compiles, the device server a board runs, and tessel itself: the command with
# its workers and the Python package. Under the prefix:
#   lib/libtessel-runtime.so.0.1.0, .so.0, .so       the runtime (with the support and target code it calls)
#   include/tessel/runtime/*.h, include/tessel/support/{ErrorType,DataType,KernelAbi,GpuModuleFormat}.h
#                                                    its headers: the standard library and each other only
#   lib/cmake/tessel/tessel{Config,ConfigVersion,Targets}.cmake   find_package(tessel): tessel::runtime
#   lib/pkgconfig/tessel-runtime.pc                  pkg-config --cflags --libs tessel-runtime
#   bin/tessel-rpc-server, bin/tessel-device-worker  the runtime-only device server and its worker
#   bin/tessel, bin/tessel-{measure,vta}-worker      the command and the workers it starts beside it
#   lib/python3.X/dist-packages/tessel/              the Python package: _tessel*.so and the *.py
#                                                    (TESSEL_INSTALL_PYTHONDIR, src/python/CMakeLists.txt)
# Everything finds the rest relative to itself: the package files, `tessel` (its workers beside
# it, the drawing code of `records plot` in the installed package) and the Python extension (the
# workers in ../../../../bin), so a prefix staged with DESTDIR or moved elsewhere (a board's
# image) still works, and no installed file reads the build tree (support/HelperPrograms.h).
# tests/install checks all of it from outside the tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The runtime as one shared library, linked from the objects the static libraries compiled (no
# second compilation): a program links -ltessel-runtime alone, and the libraries tessel's code
# calls (fmt, libgomp, libdl) are the library's own dependencies, not the program's.
add_library(tessel_runtime_shared SHARED $<TARGET_OBJECTS:tessel_support> $<TARGET_OBJECTS:tessel_target>
                                         $<TARGET_OBJECTS:tessel_runtime>)
add_library(tessel::runtime ALIAS tessel_runtime_shared)
set_target_properties(tessel_runtime_shared PROPERTIES OUTPUT_NAME tessel-runtime EXPORT_NAME runtime
                      VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR})
target_include_directories(tessel_runtime_shared INTERFACE $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src>
                                                           $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/tessel>)
target_compile_features(tessel_runtime_shared INTERFACE cxx_std_20)
# What the three static libraries link, less each other: the same third-party libraries and the
# runtime's OpenMP link flag.
set(runtime_dependencies)
foreach(library tessel_support tessel_target tessel_runtime)
  get_target_property(links ${library} INTERFACE_LINK_LIBRARIES)
  if(links)
    list(APPEND runtime_dependencies ${links})
  endif()
endforeach()
list(FILTER runtime_dependencies EXCLUDE REGEX "^tessel_")
target_link_libraries(tessel_runtime_shared PRIVATE ${runtime_dependencies})
target_link_options(tessel_runtime_shared PRIVATE $<TARGET_PROPERTY:tessel_runtime,INTERFACE_LINK_OPTIONS>)
if(NOT TESSEL_SANITIZE)
  # Every symbol the objects call is resolved here: a missing object is a link error of tessel's,
  # not of the user's program.
  target_link_options(tessel_runtime_shared PRIVATE LINKER:--no-undefined)
endif()

set(TESSEL_PUBLIC_RUNTIME_HEADERS CudaDevice.h CudaGraph.h Device.h ElfCheck.h GpuDeviceInfo.h GpuModule.h GraphExecutor.h
    MachineLoad.h Module.h Npy.h OpenclDevice.h Params.h Tensor.h Threading.h TimeEvaluator.h)
set(TESSEL_PUBLIC_SUPPORT_HEADERS ErrorType.h DataType.h KernelAbi.h GpuModuleFormat.h)
list(TRANSFORM TESSEL_PUBLIC_RUNTIME_HEADERS PREPEND ${PROJECT_SOURCE_DIR}/src/runtime/)
list(TRANSFORM TESSEL_PUBLIC_SUPPORT_HEADERS PREPEND ${PROJECT_SOURCE_DIR}/src/support/)
install(FILES ${TESSEL_PUBLIC_RUNTIME_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessel/runtime)
install(FILES ${TESSEL_PUBLIC_SUPPORT_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tessel/support)

install(TARGETS tessel_runtime_shared EXPORT tesselTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
set(TESSEL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tessel)
install(EXPORT tesselTargets NAMESPACE tessel:: DESTINATION ${TESSEL_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/tesselConfig.cmake.in ${CMAKE_BINARY_DIR}/tesselConfig.cmake
                              INSTALL_DESTINATION ${TESSEL_CMAKE_DIR})
# 0.x: a minor version may change the library's interface.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/tesselConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/tesselConfig.cmake ${CMAKE_BINARY_DIR}/tesselConfigVersion.cmake DESTINATION ${TESSEL_CMAKE_DIR})

# The .pc file's prefix is its own directory's ancestor (pkg-config's ${pcfiledir}).
file(RELATIVE_PATH TESSEL_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/tessel-runtime.pc.in ${CMAKE_BINARY_DIR}/tessel-runtime.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/tessel-runtime.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# What `make install` builds first: the install rules name these files.
add_custom_target(install-files)
add_dependencies(install-files tessel_runtime_shared)
foreach(program tessel-rpc-server tessel-device-worker tessel tessel-measure-worker tessel-vta-worker)
  if(TARGET ${program})
    install(TARGETS ${program} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
    add_dependencies(install-files ${program})
  endif()
endforeach()

# The Python package: the extension as built (it links tessel's libraries statically, so it needs
# no RPATH; CMake drops the build tree's on install) and the pure-Python files from the source tree
# (the build copies the same files beside the extension).
if(TARGET _tessel)
  install(TARGETS _tessel LIBRARY DESTINATION ${TESSEL_INSTALL_PYTHONDIR}/tessel)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/python/tessel/ DESTINATION ${TESSEL_INSTALL_PYTHONDIR}/tessel
          FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)
  add_dependencies(install-files _tessel)
endif()
