// The test targets reach DepotTesting's TCPProxy through TestSupport.
@_exported import DepotTesting
