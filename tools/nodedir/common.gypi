# Minimal node-gyp "nodedir" for building kindling against Node-API alone.
# node-gyp includes this file in every build; it only needs to define the
# configurations. The Node-API headers come from the node-api-headers package
# (see binding.gyp), so no Node source tree or header download is needed.
{
  'variables': {
    'node_shared_openssl%': 'true',
    'node_use_openssl%': 'false',
  },
  'target_defaults': {
    'default_configuration': 'Release',
    'configurations': {
      'Release': {
        'defines': ['NDEBUG'],
        'cflags': ['-O3'],
      },
      'Debug': {
        'defines': ['DEBUG', '_DEBUG'],
        'cflags': ['-g', '-O0'],
      },
    },
  },
}
