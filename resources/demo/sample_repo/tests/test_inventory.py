import unittest

from src.inventory import low_stock, total_value


class InventoryTest(unittest.TestCase):
    def test_total_value(self):
        self.assertEqual(total_value([{"price": 2, "qty": 3}, {"price": 1, "qty": 4}]), 10)

    def test_negative_quantities_are_ignored(self):
        self.assertEqual(total_value([{"price": 2, "qty": 3}, {"price": 5, "qty": -1}]), 6)

    def test_low_stock(self):
        items = [{"name": "bolt", "qty": 1}, {"name": "nut", "qty": 9}]
        self.assertEqual(low_stock(items), ["bolt"])


if __name__ == "__main__":
    unittest.main()
