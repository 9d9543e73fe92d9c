// swift-format-ignore-file
// (Its documentation samples are checked line for line against the articles, so it keeps their layout.)
// A program that depends on SiftJSON alone: it prints the records of a JSON file (an array or
// NDJSON) that a predicate matches, as NDJSON, the way `sift filter PREDICATE FILE` does. It is the
// sample of SiftJSON's "Filtering Records" article, built and run by the tests.
//
//     filter-ndjson 'age >= 18 AND address.city BEGINSWITH[cd] "sao"' Samples/people.json

import Foundation
import SiftJSON

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: filter-ndjson PREDICATE FILE\n".utf8))
    exit(2)
}
do {
    let filter = RecordFilter(try SiftPredicate(arguments[1]))
    let input = try MappedInput.open(arguments[2])
    let selection = try filter.select(from: input)
    selection.write { bytes in FileHandle.standardOutput.write(Data(bytes)) }
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
