# install(EXPORT), zyfaConfig.cmake and its version file.
