# lockstep::pg_query: PostgreSQL's own parser as a library (Debian: libpg-query-dev, a static
# libpg_query.a and <pg_query.h>). Used by the build and by find_package(lockstep), since the
# static lockstep_model links it.
if(NOT TARGET lockstep::pg_query)
  find_library(LOCKSTEP_PG_QUERY_LIBRARY NAMES pg_query)
  find_path(LOCKSTEP_PG_QUERY_INCLUDE_DIR NAMES pg_query.h)
  if(NOT LOCKSTEP_PG_QUERY_LIBRARY OR NOT LOCKSTEP_PG_QUERY_INCLUDE_DIR)
    message(FATAL_ERROR "lockstep needs libpg_query, PostgreSQL's parser (Debian: libpg-query-dev; scripts/install-deps installs it)")
  endif()
  add_library(lockstep::pg_query STATIC IMPORTED GLOBAL)
  set_target_properties(lockstep::pg_query PROPERTIES
    IMPORTED_LOCATION "${LOCKSTEP_PG_QUERY_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${LOCKSTEP_PG_QUERY_INCLUDE_DIR}")
endif()
