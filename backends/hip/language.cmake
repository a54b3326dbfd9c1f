# Enables the HIP language for the HIP backend. Included from the top-level
# CMakeLists.txt when DK_WITH_HIP is on: CMake wants a language enabled in the
# highest directory common to every target that compiles or links it, and
# libdeltakit (hal/) links the backend's HIP objects.
#
# Works with Debian's ROCm 5.2 packages (hipcc, libamdhip64-dev, rocm-device-libs):
# clang++-15 as the HIP compiler, no /opt/rocm. CMake 3.25 looks for
# <rocm root>/lib/cmake/hip-lang, which Debian keeps under /usr/lib/<multiarch>/cmake,
# so three things must be set before enable_language(HIP) (see the numbered steps).
# A regular ROCm install (HIPCXX or CMAKE_HIP_COMPILER given, /opt/rocm) is left alone.
include_guard(GLOBAL)

# The one place that decides the AMD targets; CMake's own default would be gfx803.
set(DK_HIP_ARCHS "gfx906" CACHE STRING "AMD GPU targets to compile the kernels for (;-list)")
foreach(_dk_arch IN LISTS DK_HIP_ARCHS)
  # The kernels are written for 64-lane waves (dk::kWarpSize); RDNA (gfx10+) runs wave32.
  if(NOT _dk_arch MATCHES "^gfx9[0-9a-f][0-9a-f]$")
    message(FATAL_ERROR "DK_HIP_ARCHS: ${_dk_arch} is not a gfx9 (wave64 GCN/CDNA) target")
  endif()
endforeach()
set(CMAKE_HIP_ARCHITECTURES "${DK_HIP_ARCHS}")

set(DK_ROCM_PATH "/usr" CACHE PATH "Where the ROCm headers and libraries live (Debian: /usr)")

if(NOT CMAKE_HIP_COMPILER AND "$ENV{HIPCXX}" STREQUAL "" AND NOT EXISTS /opt/rocm/lib/cmake/hip-lang)
  find_program(DK_HIP_CLANG NAMES clang++-15 DOC "clang++ 15 (Debian's HIP compiler)")
  if(NOT DK_HIP_CLANG)
    message(FATAL_ERROR "DK_WITH_HIP: clang++-15 not found "
                        "(apt-get install hipcc libamdhip64-dev rocm-device-libs)")
  endif()
  set(CMAKE_HIP_COMPILER "${DK_HIP_CLANG}")
endif()

# Debian: device bitcode and the CMake packages sit under the multiarch library dir.
set(_dk_multiarch "${CMAKE_LIBRARY_ARCHITECTURE}")
if(NOT _dk_multiarch)
  set(_dk_multiarch x86_64-linux-gnu)
endif()
set(_dk_debian_cmake "${DK_ROCM_PATH}/lib/${_dk_multiarch}/cmake")
set(_dk_debian_bitcode "${DK_ROCM_PATH}/lib/${_dk_multiarch}/amdgcn/bitcode")

if(EXISTS "${_dk_debian_cmake}/hip-lang/hip-lang-config.cmake"
   AND NOT EXISTS "${DK_ROCM_PATH}/lib/cmake/hip-lang/hip-lang-config.cmake")
  # 1. A ROCm root whose lib/cmake/hip-lang is the Debian package's.
  set(_dk_root "${CMAKE_BINARY_DIR}/dk-rocm-root")
  file(MAKE_DIRECTORY "${_dk_root}/lib/cmake")
  if(NOT EXISTS "${_dk_root}/lib/cmake/hip-lang")
    file(CREATE_LINK "${_dk_debian_cmake}/hip-lang" "${_dk_root}/lib/cmake/hip-lang" SYMBOLIC)
  endif()
  set(CMAKE_HIP_COMPILER_ROCM_ROOT "${_dk_root}")
  # 2. amd_comgr / AMDDeviceLibs are looked up inside try_compile too.
  list(APPEND CMAKE_PREFIX_PATH "${_dk_debian_cmake}")
  list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CMAKE_PREFIX_PATH)
  # 3. Tell clang where the HIP headers and the device libraries are.
  set(CMAKE_HIP_FLAGS_INIT
      "--rocm-path=${DK_ROCM_PATH} --rocm-device-lib-path=${_dk_debian_bitcode}")
endif()

enable_language(HIP)
if(CMAKE_HIP_COMPILER_VERSION VERSION_LESS 15)
  message(FATAL_ERROR "DK_WITH_HIP needs clang 15 or newer as the HIP compiler "
                      "(found ${CMAKE_HIP_COMPILER} ${CMAKE_HIP_COMPILER_VERSION})")
endif()
set(DK_HIP_LANGUAGE_ENABLED ON)
