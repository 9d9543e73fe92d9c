import Foundation
import SiftTool

exit(SiftCommand.run())
