# wheelcheck_unity(TARGET BATCH): compiles TARGET's C++ sources in batches of BATCH files (a unity build),
# as CMake's UNITY_BUILD does, but each batch includes its files by paths relative to itself
# (../../inspector/elf/dynamic.cpp), never by the checkout's absolute path. CMake 3.25's generated batches
# name the absolute path, which then went into the objects (the sanitizers' source locations and type
# names: "lambda at /work/clone/..."), so a clone in another folder missed the compiler cache and got
# other binaries (CMake 3.32's UNITY_BUILD_RELOCATABLE does what this does). Sources with
# SKIP_UNITY_BUILD_INCLUSION, or with compile definitions or options of their own, compile alone. Call it
# from the folder that made the target, after every source property is set.

# Writes the batch collected so far (a macro: it sets the function's variables).
macro(wheelcheck_unity_flush)
  if(count GREATER 0)
    file(CONFIGURE OUTPUT ${dir}/batch_${index}.cxx CONTENT "${content}")
    list(APPEND batches ${dir}/batch_${index}.cxx)
    math(EXPR index "${index} + 1")
    set(content "")
    set(count 0)
  endif()
endmacro()

function(wheelcheck_unity target batch)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/unity-${target})
  set(members "")
  set(batches "")
  set(content "")
  set(count 0)
  set(index 0)
  foreach(src IN LISTS sources)
    if(NOT src MATCHES "\\.(cpp|cc|cxx)$")
      continue()
    endif()
    get_source_file_property(skip ${src} SKIP_UNITY_BUILD_INCLUSION)
    get_source_file_property(defs ${src} COMPILE_DEFINITIONS)
    get_source_file_property(opts ${src} COMPILE_OPTIONS)
    if(skip OR defs OR opts)
      continue()
    endif()
    if(IS_ABSOLUTE ${src})
      set(path ${src})
    else()
      set(path ${source_dir}/${src})
    endif()
    file(RELATIVE_PATH rel ${dir} ${path})
    string(APPEND content "#include \"${rel}\"\n")
    list(APPEND members ${src})
    math(EXPR count "${count} + 1")
    if(count EQUAL batch)
      wheelcheck_unity_flush()
    endif()
  endforeach()
  wheelcheck_unity_flush()
  if(members)
    set_source_files_properties(${members} PROPERTIES HEADER_FILE_ONLY ON)
    target_sources(${target} PRIVATE ${batches})
  endif()
endfunction()
