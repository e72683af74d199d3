// Prints boost::hash<std::string> of each key read from standard input (one key per line,
// as hex; an empty line is the empty key): "hex hash64" per line, after a "#" line naming
// the Boost version and the signedness of char. See tests/unit/test_hash_boost.c for how
// it was compiled against each Boost release.
#include <boost/functional/hash.hpp>
#include <boost/version.hpp>

#include <cstdio>
#include <string>

int main()
{
    std::printf("# BOOST_VERSION %d, size_t %zu bytes, char %s\n", BOOST_VERSION, sizeof(std::size_t),
                static_cast<char>(-1) < 0 ? "signed" : "unsigned");
    char line[4096];
    while (std::fgets(line, sizeof line, stdin)) {
        std::string hex(line), key;
        while (!hex.empty() && (hex.back() == '\n' || hex.back() == '\r'))
            hex.pop_back();
        for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
            key.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
        std::printf("%s %016llx\n", hex.empty() ? "-" : hex.c_str(),
                    static_cast<unsigned long long>(boost::hash<std::string>()(key)));
    }
    return 0;
}
