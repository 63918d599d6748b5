import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 loopback address with this port (0: the system picks a free one).
func loopbackAddress(port: Int = 0) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return address
}

/// A TCP socket bound to a free loopback port, and that port; the caller closes the socket.
func boundLoopbackSocket() throws -> (socket: Int32, port: Int) {
    let handle = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard handle >= 0 else { throw LoopbackError.noSocket }
    var address = loopbackAddress()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(handle, $0, length) == 0 && getsockname(handle, $0, &length) == 0 }
    }
    guard bound else {
        close(handle)
        throw LoopbackError.noFreePort
    }
    return (handle, Int(UInt16(bigEndian: address.sin_port)))
}

enum LoopbackError: Error { case noSocket, noFreePort }
