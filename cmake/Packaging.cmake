# Installation in the FHS places (cmake --install) and a Debian package (cpack): the two
# binaries, their man pages, the example configuration as <etc>/shardproxy/proxy.yaml, the
# systemd unit with the installed paths, the logrotate snippet and the user documentation.
# <etc> is /etc for the prefix /usr (the package's) and <prefix>/etc otherwise, decided when
# installing, so one build can be installed under /usr/local and packaged for /usr.
include(GNUInstallDirs)

install(TARGETS shardproxy shardbench RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES docs/man/shardproxy.1 docs/man/shardbench.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES README.md docs/operations.md docs/commands.md docs/shardbench.md
              conf/prometheus.yml conf/grafana-dashboard.json
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The unit names /usr/local/bin, /etc and /usr/share/doc: rewritten for the prefix in use.
install(CODE "
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
    set(etc /etc)
  else()
    set(etc \"\${CMAKE_INSTALL_PREFIX}/etc\")
  endif()
  file(INSTALL \"${PROJECT_SOURCE_DIR}/conf/proxy.yaml\"
       DESTINATION \"\${etc}/shardproxy\")
  file(INSTALL \"${PROJECT_SOURCE_DIR}/conf/shardproxy.logrotate\"
       DESTINATION \"\${etc}/logrotate.d\" RENAME shardproxy)
  file(READ \"${PROJECT_SOURCE_DIR}/conf/shardproxy.service\" unit)
  string(REPLACE \"/usr/local/bin/\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/\"
         unit \"\${unit}\")
  string(REPLACE \"/etc/shardproxy/\" \"\${etc}/shardproxy/\" unit \"\${unit}\")
  string(REPLACE \"/usr/share/doc/shardproxy/\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}/\"
         unit \"\${unit}\")
  # file(INSTALL) adds DESTDIR itself; file(WRITE) does not.
  set(unit_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/lib/systemd/system\")
  message(STATUS \"Installing: \${unit_dir}/shardproxy.service\")
  file(MAKE_DIRECTORY \"\${unit_dir}\")
  file(WRITE \"\${unit_dir}/shardproxy.service\" \"\${unit}\")
")

# The package: always for the prefix /usr. dpkg keeps an administrator's changes to the
# conffiles across upgrades; postinst enables and starts the service where systemd runs.
set(CPACK_GENERATOR DEB)
set(CPACK_SET_DESTDIR ON)  # install with DESTDIR, so the prefix is /usr while installing
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_NAME shardproxy)
set(CPACK_PACKAGE_VENDOR "shardproxy")
set(CPACK_PACKAGE_CONTACT "shardproxy maintainers <shardproxy@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "sharding Redis proxy with a built-in load generator")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends: from the libraries the binaries link
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "redis-server, redis-tools, logrotate")
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles
     "/etc/shardproxy/proxy.yaml\n/etc/logrotate.d/shardproxy\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    "${CMAKE_CURRENT_BINARY_DIR}/debian/conffiles;${PROJECT_SOURCE_DIR}/packaging/debian/postinst;${PROJECT_SOURCE_DIR}/packaging/debian/prerm;${PROJECT_SOURCE_DIR}/packaging/debian/postrm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
